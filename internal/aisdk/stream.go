// Package aisdk encodes assistant answers in the two Vercel AI SDK chat wire
// formats, so the SDK's own useChat clients read docsmith's streams unchanged:
// the UI message stream (SSE; AI SDK 5, 6 and 7, the v2 endpoint) and the
// data stream (AI SDK 4, the v1 endpoint). It also decodes the chat messages
// those clients send. It knows nothing about retrieval or models: the
// assistant drives either encoder through the [Stream] interface.
//
// The formats and every choice made here (which chunks, which keys, where the
// threadId goes) were verified against the real npm clients (ai 4.3.19,
// 5.0.0 to 7.0.x).
//
// # Status and headers
//
// A stream writes the response status (always 200) and its headers on the
// first call that produces bytes, so the HTTP status is decided before the
// first byte: validate the request and set your own headers (x-thread-id,
// CORS, Access-Control-Expose-Headers) before the first call; answer invalid
// requests with a JSON error instead of opening a stream. Once a stream has
// started ([Stream.Started]), failures go in-band with [Stream.Error].
package aisdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Source is a citation: a passage used for the answer.
type Source struct {
	ID    string // unique within the message, e.g. "src_1"
	URL   string
	Title string // optional; omitted from the wire when empty
	// ProviderMetadata is optional: a JSON object of objects,
	// {"<provider>":{…}}, sent as the source's providerMetadata in both
	// protocols (the clients keep it on the source part). Anything else
	// is refused, since the clients' schema would reject the stream.
	ProviderMetadata json.RawMessage
}

// Usage is the token count of one answer. The data stream carries it as
// {promptTokens, completionTokens}; the UI message stream, which has no usage
// field of its own, as message metadata {inputTokens, outputTokens,
// totalTokens} (the AI SDK 5 names).
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Stream is one assistant message on the wire. [UIMessageStream] and
// [DataStream] implement it with the same meaning for every method, so the
// assistant can drive either protocol.
//
// The usual order is Start, Heartbeat while retrieving, Sources, then for each
// text block TextStart, TextDelta…, TextEnd, and finally Finish (or Error at
// any point). Every method is safe for concurrent use (a heartbeat ticker may
// run beside the writer). After Finish or Error, every call returns
// [ErrClosed]. After a write fails (the client went away), every call returns
// that error, so the caller can stop generating.
type Stream interface {
	// Start begins the assistant message. Both arguments are optional (an
	// empty value is left out). It may be called once, before any source or
	// text.
	Start(messageID, threadID string) error
	// Sources emits citations, conventionally before the text that cites them.
	Sources(srcs []Source) error
	// BufferSources is Sources that leaves its events in the stream's
	// buffer, as BufferTextDelta does, for the next call that writes: for
	// citations whose text follows at once, so both go out in one write.
	BufferSources(srcs []Source) error
	// TextStart opens a text block; id must be unique among the open blocks.
	// Its event is held, as BufferTextDelta's are, and goes out with the
	// block's first text.
	TextStart(id string) error
	// TextDelta appends to an open text block. Empty deltas write nothing.
	TextDelta(id, delta string) error
	// BufferTextDelta is TextDelta that leaves its event in the stream's
	// buffer, to be written and flushed by Flush or by the next call that
	// writes, so that deltas that come in a burst reach the client in one
	// write. Events held past a few KiB are written at once.
	BufferTextDelta(id, delta string) error
	// Flush writes and flushes the events BufferTextDelta holds, if any.
	Flush() error
	// TextEnd closes a text block.
	TextEnd(id string) error
	// Text writes a whole text block, as TextStart, TextDelta for each
	// piece and TextEnd would, in one write: for text that is ready all at
	// once, such as an answer quoted without a model.
	Text(id string, pieces ...string) error
	// Data writes a data part: name (lowercase words joined by hyphens,
	// such as "answer-status"), an optional id and a JSON value. Each
	// protocol puts it where its clients keep per-message data: see
	// [UIMessageStream.Data] and [DataStream.Data]. Like a source, it is
	// content: Start must come before it.
	Data(name, id string, value json.RawMessage) error
	// BufferData is Data held for the next call that writes.
	BufferData(name, id string, value json.RawMessage) error
	// Heartbeat writes a keep-alive that every client ignores. Use it while
	// retrieving so proxies do not time the connection out.
	Heartbeat() error
	// Finish closes any open text block and ends the message. threadID
	// (optional) goes where each protocol carries it on its finish event;
	// topLevelThreadID also adds the top-level "threadId" key to the UI
	// message stream's finish chunk, which breaks strict-schema clients (ai
	// 5.0.0–5.0.216, 6.0.0–6.0.230); the data stream ignores the flag. usage
	// may be nil. metadata adds the caller's members to the finish
	// metadata (v2 messageMetadata, beside threadId and usage; v1 the d:
	// part, which the client drops, so a v1 client needs the value as a
	// Data annotation too); the keys threadId, usage and finishReason are
	// the encoders' own and refused.
	Finish(threadID string, topLevelThreadID bool, usage *Usage, metadata ...Member) error
	// Error reports a failure in-band and ends the stream. The client shows
	// message to the user, so it must not carry internal details. If nothing
	// was written yet, prefer an HTTP error status (see Started).
	Error(message string) error
	// Started reports whether the status and headers have been written.
	Started() bool
}

// ErrClosed is returned by calls after Finish or Error.
var ErrClosed = errors.New("aisdk: stream already finished")

// ErrSequence is wrapped by errors about calls in an order the protocols do
// not allow (a delta for a text block that is not open, Start twice, …).
// Nothing is written for such a call.
var ErrSequence = errors.New("aisdk: call out of sequence")

// ErrInvalid is wrapped by errors about values no client would accept (a
// data part name that is not a plain word, JSON that does not parse,
// provider metadata of the wrong shape, a reserved finish metadata key).
// Nothing is written for such a call.
var ErrInvalid = errors.New("aisdk: invalid value")

// defaultErrorText replaces an empty error message: the clients show the
// text as the error, and the SDK's own servers use this wording.
const defaultErrorText = "An error occurred."

// writer is what both encoders share: headers on the first byte, one write
// and one flush per call (a call's events are ready together, so the client
// gets them together, with one system call) or per burst of buffered
// deltas, a sticky write error, the text blocks that are open and the
// call-order checks. Its methods expect mu to be held, except Started and
// Flush.
type writer struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      http.ResponseController
	headers [][2]string

	started bool  // status and headers written
	closed  bool  // Finish or Error done
	err     error // first write error, returned from then on

	began   bool     // Start called
	content bool     // a source or text was emitted
	open    []string // open text block ids, in opening order

	buf    []byte  // the call's events, after those BufferTextDelta holds
	pooled *[]byte // buf's holder from bufferPool, until release
}

// initialBuffer holds the largest call of most answers (a quoted answer's
// text block) without growing.
const initialBuffer = 4 << 10

// bufferPool holds the event buffers of finished streams for new ones:
// a buffer is taken when a stream is made and given back once the stream's
// last event (Finish or Error) is written. A stream abandoned before that
// leaves its buffer to the garbage collector.
var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, initialBuffer); return &b }}

// init readies wr to write on w. The writer lives inside its encoder, one
// allocation for both.
func (wr *writer) init(w http.ResponseWriter, headers [][2]string) {
	wr.w, wr.rc, wr.headers = w, *http.NewResponseController(w), headers
	wr.pooled = bufferPool.Get().(*[]byte)
	wr.buf = (*wr.pooled)[:0]
}

// release gives the buffer back once the stream is closed: nothing writes
// to it after that, since every call first checks usable.
func (wr *writer) release() {
	if !wr.closed || wr.pooled == nil {
		return
	}
	if cap(wr.buf) <= maxPooledBuffer {
		*wr.pooled = wr.buf[:0]
		bufferPool.Put(wr.pooled)
	}
	wr.pooled, wr.buf = nil, nil
}

// maxPooledBuffer bounds the buffers kept for reuse: one grown by a rare
// large call goes to the garbage collector instead.
const maxPooledBuffer = 64 << 10

// usable reports whether another event may be written.
func (wr *writer) usable() error {
	if wr.err != nil {
		return wr.err
	}
	if wr.closed {
		return ErrClosed
	}
	return nil
}

// checkStart validates a Start call.
func (wr *writer) checkStart() error {
	if err := wr.usable(); err != nil {
		return err
	}
	if wr.began {
		return fmt.Errorf("%w: Start called twice", ErrSequence)
	}
	if wr.content {
		return fmt.Errorf("%w: Start after sources or text", ErrSequence)
	}
	return nil
}

// checkText validates a text call on block id: it must be open, or, for
// TextStart (opening), not open.
func (wr *writer) checkText(id string, opening bool) error {
	if err := wr.usable(); err != nil {
		return err
	}
	isOpen := slices.Contains(wr.open, id)
	switch {
	case opening && isOpen:
		return fmt.Errorf("%w: text block %q is already open", ErrSequence, id)
	case !opening && !isOpen:
		return fmt.Errorf("%w: text block %q is not open", ErrSequence, id)
	}
	return nil
}

// raw appends literal framing bytes to the call's events.
func (wr *writer) raw(s string) { wr.buf = append(wr.buf, s...) }

// flush writes the call's buffered events (headers first, if needed) in one
// write and flushes them to the client. A call that buffered nothing writes
// nothing, not even the headers.
func (wr *writer) flush() error {
	if len(wr.buf) == 0 {
		return nil
	}
	defer func() {
		wr.buf = wr.buf[:0]
		wr.release()
	}()
	if !wr.started {
		wr.started = true
		h := wr.w.Header()
		for _, kv := range wr.headers {
			h.Set(kv[0], kv[1])
		}
		// Streams outlive the server's WriteTimeout. Writers that cannot
		// (ErrNotSupported) have no deadline to clear.
		if err := wr.rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return wr.fail(err)
		}
		wr.w.WriteHeader(http.StatusOK)
	}
	if _, err := wr.w.Write(wr.buf); err != nil {
		return wr.fail(err)
	}
	// A writer without Flush (a middleware wrapper lacking Unwrap) still gets
	// a correct stream, only a buffered one.
	if err := wr.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return wr.fail(err)
	}
	return nil
}

// hold leaves the call's events in the buffer for a later write, unless
// the buffer has grown to initialBuffer: then it is written now.
func (wr *writer) hold() error {
	if len(wr.buf) < initialBuffer {
		return nil
	}
	return wr.flush()
}

// Flush writes and flushes the events held in the buffer, if any.
func (wr *writer) Flush() error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if err := wr.usable(); err != nil {
		return err
	}
	return wr.flush()
}

func (wr *writer) fail(err error) error {
	wr.err = fmt.Errorf("aisdk: write stream: %w", err)
	return wr.err
}

// closeText forgets block id.
func (wr *writer) closeText(id string) {
	wr.open = slices.DeleteFunc(wr.open, func(o string) bool { return o == id })
}

// Started reports whether the status and headers have been written; until
// then the caller may still answer with an HTTP error instead.
func (wr *writer) Started() bool {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return wr.started
}

func errorText(message string) string {
	if message == "" {
		return defaultErrorText
	}
	return message
}
