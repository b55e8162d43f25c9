package assistant

import "errors"

// Message is one message of the conversation a reader's client sends.
type Message struct {
	Role string // "user", "assistant", "system" as sent
	Text string
	// ThreadID is the thread an assistant message of ours says it belongs
	// to, read back from the client's history; "" for others.
	ThreadID string
}

// Source is a citation: a passage the answer stands on.
type Source struct {
	// ID is unique within the answer: "src_1", "src_2", …
	ID string
	// URL links the passage's section: the page and its heading's anchor.
	URL   string
	Title string
	// Path is the page's path in the docs.
	Path string
	// Quote is a short plain-text excerpt of the passage, as the page
	// shows it, for a reader to see before following the link and for the
	// link to highlight; "" when there is none to offer.
	Quote string
}

// Usage is the token count of one answer written by a model.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Answer statuses: what an answer says about whether the docs cover the
// question. They are also the statuses its turn is stored with.
const (
	// StatusAnswered: the docs cover what was asked.
	StatusAnswered = TurnAnswered
	// StatusPartial: the docs cover part of what was asked; the status's
	// Note says which part they do not.
	StatusPartial = TurnPartial
	// StatusNotCovered: the docs do not cover the question; the answer
	// says so.
	StatusNotCovered = TurnNotCovered
)

// AnswerStatus is what an answer is worth: whether the docs cover the
// question, and if only partly, what they leave out.
type AnswerStatus struct {
	// Status is StatusAnswered, StatusPartial or StatusNotCovered.
	Status string
	// Note says, for the reader, what the docs do not cover ("The docs
	// don't mention Datadog."); "" when they cover everything.
	Note string
	// Missing are the names the docs never mention, as the reader wrote
	// them.
	Missing []string
}

// Grounding is the check of one sentence of an answer written by a model
// against the passages it cites.
type Grounding struct {
	// TextID is the text block the sentence is in.
	TextID string
	// Start and End delimit the sentence in the text block, in UTF-16 code
	// units (as a JavaScript client indexes the text it assembled).
	Start, End int
	// Sources are the ids of the passages the sentence cites.
	Sources []string
	// Supported says whether the cited passages hold what the sentence
	// claims: its key terms, numbers, identifiers and code.
	Supported bool
	// Missing are what the cited passages do not hold.
	Missing []string
}

// Finish ends an answer.
type Finish struct {
	ThreadID string
	// TopLevelThreadID asks for the thread id in the place some clients of
	// the UI message stream reject (tenant.Domain.FinishThreadID).
	TopLevelThreadID bool
	Status           AnswerStatus
	// Usage is nil for an answer no model wrote.
	Usage *Usage
}

// Sink receives an answer's events, in order: Start; Heartbeat while
// nothing else is ready; Sources; Status once it is decided; the text, as
// a block written at once (Text) or streamed (TextStart, BufferTextDelta…,
// Flush, TextEnd), with a Grounding after each sentence it checks; and
// Finish, or Error at any point. The HTTP layer turns them into a wire
// format. A method's error means the answer cannot reach the reader any
// more (the client went away): the answer stops there. Heartbeat may be
// called from another goroutine than the rest.
type Sink interface {
	Start(messageID, threadID string) error
	Heartbeat() error
	// Sources sends citations now; BufferSources holds them for the next
	// event that is sent, so that citations and the text quoting them
	// reach the reader together.
	Sources(srcs []Source) error
	BufferSources(srcs []Source) error
	// Status says what the answer is worth, once it is decided: before the
	// text when that is ready at once, after it when a model wrote it. It
	// may come more than once, the last one standing. Like BufferSources,
	// it is held for the next event that is sent (text or Finish).
	Status(s AnswerStatus) error
	// Text sends a whole text block, in pieces that together are its text.
	Text(id string, pieces ...string) error
	TextStart(id string) error
	// BufferTextDelta holds a piece of text until Flush or the next event
	// that is sent, so that a burst of pieces reaches the reader at once.
	BufferTextDelta(id, delta string) error
	Flush() error
	TextEnd(id string) error
	Grounding(g Grounding) error
	Finish(f Finish) error
	// Error ends the answer with a message the reader sees: it must carry
	// no internal detail.
	Error(message string) error
}

// ErrClosed is what a Sink returns, wrapped, for an event after the
// answer ended (Finish or Error).
var ErrClosed = errors.New("assistant: the answer has already ended")
