package openai

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// typicalStream is a stream as OpenAI sends it for an answer of n deltas
// of four characters: a first chunk with the role, the deltas, a chunk
// with the finish reason, a chunk with usage, and [DONE].
func typicalStream(n int) []byte {
	const head = `data: {"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[`
	var b strings.Builder
	b.WriteString(head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&b, head+`{"index":0,"delta":{"content":"w%03d"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", i%1000)
	}
	b.WriteString(head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(head + `],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkDecodeStream reads a typical stream of 200 deltas with the
// adapter's decoder, SSE framing and chunk parsing, without the request.
func BenchmarkDecodeStream(b *testing.B) {
	body := typicalStream(200)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := newChunkReader(newSSEReader(bytes.NewReader(body)))
		var text int
		for {
			c, err := r.next()
			if errors.Is(err, errDone) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			for i := range c.choices {
				text += len(c.choices[i].content)
			}
		}
		if text != 800 {
			b.Fatalf("read %d bytes of text, want 800", text)
		}
	}
}

// BenchmarkParseChunk parses one typical delta chunk.
func BenchmarkParseChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":"abcd"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var (
		c chunk
		p jsonParser
	)
	for b.Loop() {
		if !p.parseChunk(data, &c) {
			b.Fatal("parseChunk declined a typical chunk")
		}
	}
}

// TestTypicalStreamTakesTheUsualShape keeps the benchmark's stream on the
// fast path and reading as the SDK reads it.
func TestTypicalStreamTakesTheUsualShape(t *testing.T) {
	t.Parallel()
	body := typicalStream(3)
	for event := range strings.SplitSeq(string(body), "\n\n") {
		data, ok := strings.CutPrefix(event, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var (
			c chunk
			p jsonParser
		)
		if !p.parseChunk([]byte(data+"\n"), &c) {
			t.Errorf("parseChunk declined %s", data)
		}
	}
	got, gotErr := readChunks(body)
	want, wantErr := readChunksWithSDK(body)
	sameResult(t, body, got, gotErr, want, wantErr)
}
