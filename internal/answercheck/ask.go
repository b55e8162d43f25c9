package answercheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Asker asks a domain's assistant a question as a reader would, in a
// thread of its own, and keeps nothing of it: a check's question is not a
// reader's, and must not show in conversations, insights or gaps. Its
// Service must be one whose turns are discarded (see DiscardTurns).
type Asker struct {
	Service *assistant.Service
}

// Ask answers question for d and returns the answer as the reader's client
// would have assembled it. An answer that failed is an error.
func (a Asker) Ask(ctx context.Context, d tenant.Domain, question string) (Answer, *Collected, error) {
	req := assistant.Request{FP: "answer-check", Messages: []assistant.Message{{Role: "user", Text: question}}}
	if err := req.Validate(); err != nil {
		return Answer{}, nil, fmt.Errorf("question %q: %w", clip(question), err)
	}
	ans, err := a.Service.Begin(ctx, d, req)
	if err != nil {
		return Answer{}, nil, fmt.Errorf("question %q: %w", clip(question), err)
	}
	got := &Collected{}
	if err := ans.Stream(ctx, got); err != nil {
		return Answer{}, nil, fmt.Errorf("question %q: %w", clip(question), err)
	}
	if got.Failure != "" {
		return Answer{}, nil, fmt.Errorf("question %q: the answer failed: %s", clip(question), got.Failure)
	}
	return got.Answer(), got, nil
}

func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	cut := 80
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Collected is an answer's events as a reader's client assembles them:
// the last status, the citations, the text and the grounding.
type Collected struct {
	LastStatus assistant.AnswerStatus
	Cites      []assistant.Source
	Body       strings.Builder
	Groundings []assistant.Grounding
	// Failure is the text of the error the stream ended with, if any.
	Failure string
}

var _ assistant.Sink = (*Collected)(nil)

// Answer is the collected answer as a check judges it.
func (c *Collected) Answer() Answer {
	a := Answer{Status: c.LastStatus.Status, Text: c.Body.String()}
	for _, s := range c.Cites {
		a.Cited = append(a.Cited, s.Path)
	}
	return a
}

func (c *Collected) Start(string, string) error { return nil }
func (c *Collected) Heartbeat() error           { return nil }
func (c *Collected) Sources(srcs []assistant.Source) error {
	c.Cites = append(c.Cites, srcs...)
	return nil
}
func (c *Collected) BufferSources(srcs []assistant.Source) error { return c.Sources(srcs) }
func (c *Collected) Status(s assistant.AnswerStatus) error {
	c.LastStatus = s
	return nil
}
func (c *Collected) Text(_ string, pieces ...string) error {
	for _, p := range pieces {
		c.Body.WriteString(p)
	}
	return nil
}
func (c *Collected) TextStart(string) error { return nil }
func (c *Collected) BufferTextDelta(_, delta string) error {
	c.Body.WriteString(delta)
	return nil
}
func (c *Collected) Flush() error         { return nil }
func (c *Collected) TextEnd(string) error { return nil }
func (c *Collected) Grounding(g assistant.Grounding) error {
	c.Groundings = append(c.Groundings, g)
	return nil
}
func (c *Collected) Finish(f assistant.Finish) error {
	c.LastStatus = f.Status
	return nil
}
func (c *Collected) Error(message string) error {
	c.Failure = message
	return nil
}

// DiscardTurns keeps no turn: give it as the Turns of the assistant.Service
// an Asker uses.
type DiscardTurns struct{}

// Record keeps nothing.
func (DiscardTurns) Record(context.Context, assistant.Turn) error { return nil }
