package openai

import (
	"bytes"
	"errors"
	"io"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// chunk is what the adapter reads of one chat.completion.chunk.
type chunk struct {
	choices []choice
	// hasUsage is true when the chunk carries usage (not null): the last
	// chunk of a stream that asked for it.
	hasUsage         bool
	promptTokens     int64
	completionTokens int64
}

// choice is one element of a chunk's choices.
type choice struct {
	index        int64
	content      string
	refusal      string
	toolCalls    []toolCallDelta
	finishReason string
}

// toolCallDelta is a piece of a tool call: its id and name come first, its
// arguments in pieces after.
type toolCallDelta struct {
	index     int64
	id        string
	name      string
	arguments string
}

// errDone ends a stream at its "data: [DONE]" event.
var errDone = errors.New("done")

// chunkReader reads the chunks of a streamed Chat Completions response.
//
// The SDK decodes a chunk into its full ChatCompletionChunk through
// reflection, for a few bytes of text each time, and that was most of the
// cost of a streamed answer. Here a chunk of the usual shape is read by
// parseChunk, which takes only the members the adapter uses; any other
// event (an error event, a thread.* event, a member of an unexpected type,
// escapes parseChunk does not take, JSON that is not valid) goes to the
// SDK's own decoding, so that every stream reads as it did through the SDK.
// FuzzChunkReader holds the two to the same result.
type chunkReader struct {
	events *sseReader
	parser jsonParser
	chunk  chunk
}

func newChunkReader(events *sseReader) *chunkReader {
	return &chunkReader{events: events}
}

// reset makes r read the events of body from the start, as a new
// chunkReader would, with the buffers r has.
func (r *chunkReader) reset(body io.Reader) {
	r.events.reset(body)
	r.parser.reset()
}

// next returns the next chunk, valid until the next call; errDone at the
// stream's [DONE]; io.EOF when the body ended without one; a
// *ssestream.StreamError for an error event; or what failed.
func (r *chunkReader) next() (*chunk, error) {
	ev, err := r.events.next()
	if err != nil {
		return nil, err
	}
	return r.decode(ev)
}

// decode reads one event as the SDK's stream does: [DONE] ends the stream,
// an event with an "error" member is an error, anything else is a chunk.
func (r *chunkReader) decode(ev sseEvent) (*chunk, error) {
	if bytes.HasPrefix(ev.data, []byte("[DONE]")) {
		return nil, errDone
	}
	if !bytes.HasPrefix(ev.typ, []byte("thread.")) && r.parser.parseChunk(ev.data, &r.chunk) {
		return &r.chunk, nil
	}
	return &r.chunk, decodeWithSDK(ev, &r.chunk)
}

// decodeWithSDK reads ev through the SDK's stream, as every event was read
// before parseChunk, into c.
func decodeWithSDK(ev sseEvent, c *chunk) error {
	one := &oneEvent{ev: ssestream.Event{Type: string(ev.typ), Data: bytes.Clone(ev.data)}}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](one, nil)
	if !stream.Next() {
		if err := stream.Err(); err != nil {
			return err
		}
		return errDone
	}
	fromSDK(stream.Current(), c)
	return nil
}

// fromSDK copies what the adapter uses of the SDK's chunk into c.
func fromSDK(sc openai.ChatCompletionChunk, c *chunk) {
	*c = chunk{}
	if sc.JSON.Usage.Valid() {
		c.hasUsage = true
		c.promptTokens, c.completionTokens = sc.Usage.PromptTokens, sc.Usage.CompletionTokens
	}
	for _, sch := range sc.Choices {
		ch := choice{
			index:        sch.Index,
			content:      sch.Delta.Content,
			refusal:      sch.Delta.Refusal,
			finishReason: sch.FinishReason,
		}
		for _, d := range sch.Delta.ToolCalls {
			ch.toolCalls = append(ch.toolCalls, toolCallDelta{
				index: d.Index, id: d.ID, name: d.Function.Name, arguments: d.Function.Arguments,
			})
		}
		c.choices = append(c.choices, ch)
	}
}

// oneEvent is an ssestream.Decoder of a single event.
type oneEvent struct {
	ev   ssestream.Event
	done bool
}

func (d *oneEvent) Next() bool {
	if d.done {
		return false
	}
	d.done = true
	return true
}

func (d *oneEvent) Event() ssestream.Event { return d.ev }
func (d *oneEvent) Close() error           { return nil }
func (d *oneEvent) Err() error             { return nil }
