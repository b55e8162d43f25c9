package openai

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// readChunks reads body with a chunkReader until it ends: the chunks, and
// the error that ended it (nil for [DONE] and for the end of the body).
func readChunks(body []byte) ([]chunk, error) {
	return readChunksFrom(bytes.NewReader(body))
}

// readChunksFrom is readChunks of a body read from body.
func readChunksFrom(body io.Reader) ([]chunk, error) {
	r := newChunkReader(newSSEReader(body))
	var out []chunk
	for {
		c, err := r.next()
		if errors.Is(err, errDone) || errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cloneChunk(c))
	}
}

// readChunksWithSDK reads body as the adapter did before chunkReader:
// through the SDK's decoder and stream.
func readChunksWithSDK(body []byte) ([]chunk, error) {
	res := &http.Response{
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(body)),
	}
	stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var out []chunk
	for stream.Next() {
		var c chunk
		fromSDK(stream.Current(), &c)
		out = append(out, c)
	}
	return out, stream.Err()
}

// cloneChunk copies c out of the reader's reused chunk, with nil for
// empty slices.
func cloneChunk(c *chunk) chunk {
	out := *c
	out.choices = nil
	for _, ch := range c.choices {
		ch.toolCalls = append([]toolCallDelta(nil), ch.toolCalls...)
		out.choices = append(out.choices, ch)
	}
	return out
}

// sameResult fails t unless the two readings agree: the same chunks, and
// errors that say the same.
func sameResult(t *testing.T, input []byte, got []chunk, gotErr error, want []chunk, wantErr error) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		got, want = nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("input %q:\nchunks %+v\nSDK    %+v", input, got, want)
	}
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Errorf("input %q: error %v, SDK %v", input, gotErr, wantErr)
	}
	var gotStream, wantStream *ssestream.StreamError
	if errors.As(gotErr, &gotStream) != errors.As(wantErr, &wantStream) ||
		(gotStream != nil && !bytes.Equal(gotStream.Event.Data, wantStream.Event.Data)) {
		t.Errorf("input %q: stream error %+v, SDK %+v", input, gotStream, wantStream)
	}
}

// chunkLine frames one chunk as OpenAI does.
func chunkLine(delta string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
}

// streams are stream bodies every reading must agree on: the usual ones,
// and what odd or broken servers send.
var streams = []struct {
	name string
	body string
}{
	{"text and usage", chunkLine(`{"role":"assistant","content":"","refusal":null}`) + chunkLine(`{"content":"Hi"}`) +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n" +
		"data: [DONE]\n\n"},
	{"CRLF line ends", strings.ReplaceAll(chunkLine(`{"content":"a"}`)+chunkLine(`{"content":"b"}`), "\n", "\r\n") + "data: [DONE]\r\n\r\n"},
	{"comments and keep-alives", ": keep-alive\n\n" + chunkLine(`{"content":"a"}`) + ":\n\n: OPENROUTER PROCESSING\n\n" + chunkLine(`{"content":"b"}`)},
	{"event, id and retry fields", "event: message\nid: 1\nretry: 10\n" + chunkLine(`{"content":"a"}`)},
	{"no space after the colon", `data:{"choices":[{"delta":{"content":"a"}}]}` + "\n\n"},
	{"data over several lines", "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"a\"}}]}\n\n"},
	{"an event without its empty line is dropped", chunkLine(`{"content":"a"}`) + `data: {"choices":[{"delta":{"content":"b"}}]}` + "\n"},
	{"a last line without an end", chunkLine(`{"content":"a"}`) + `data: {"choices":[]}`},
	{"a last carriage return ends an event", `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\r"},
	{"[DONE] ends the stream", chunkLine(`{"content":"a"}`) + "data: [DONE]\n\n" + chunkLine(`{"content":"b"}`)},
	{"[DONE] with more after it", chunkLine(`{"content":"a"}`) + "data: [DONE] now\n\n"},
	{"escapes", chunkLine(`{"content":"line\n\"quoted\" \\ \/ \b\f\r\t \u00e9\u4e2d\u0000"}`)},
	{"escaped surrogate pair", chunkLine(`{"content":"\ud83d\ude00"}`)},
	{"a lone escaped surrogate", chunkLine(`{"content":"\ud83d!"}`)},
	{"invalid UTF-8 kept as sent", "data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe a\"}}]}\n\n"},
	{"nulls", `data: {"choices":[{"index":null,"delta":{"content":null,"refusal":null,"tool_calls":null},"finish_reason":null},null],"usage":null}` + "\n\n"},
	{"null choices and delta", `data: {"choices":null}` + "\n\n" + `data: {"choices":[{"delta":null}]}` + "\n\n"},
	{"usage without numbers", `data: {"choices":[],"usage":{}}` + "\n\n"},
	{"refusal", chunkLine(`{"refusal":"I can't."}`)},
	{"choice of another index", `data: {"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"}}]}` + "\n\n"},
	{"tool calls", chunkLine(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}`) +
		chunkLine(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`) +
		chunkLine(`{"tool_calls":[{"index":1,"id":"c2","function":{"name":"x","arguments":"{}"}},{"index":0,"function":{"arguments":"\"a\"}"}}]}`)},
	{"error event", chunkLine(`{"content":"a"}`) + `data: {"error":{"message":"Overloaded","type":"server_error","code":null}}` + "\n\n"},
	{"error event as a string", `data: {"error":"model crashed"}` + "\n\n"},
	{"error after the chunk's members", `data: {"choices":[],"error":{"message":"late"}}` + "\n\n"},
	{"error of a thread event", "event: thread.run.failed\ndata: {\"error\":{\"message\":\"x\"}}\n\n"},
	{"thread event", "event: thread.message.delta\n" + chunkLine(`{"content":"a"}`)},
	{"not JSON", "data: hello\n\n"},
	{"truncated JSON", `data: {"choices":[{"delta":{"content":"a"}}]` + "\n\n"},
	{"trailing garbage", `data: {"choices":[]} x` + "\n\n"},
	{"empty data", "data:\n\n"},
	{"an array", "data: [1, 2]\n\n"},
	{"a string", "data: \"x\"\n\n"},
	{"null", "data: null\n\n"},
	{"content of another type", chunkLine(`{"content":5}`) + chunkLine(`{"content":{"a":1}}`) + chunkLine(`{"content":true}`)},
	{"index of another type", `data: {"choices":[{"index":"1","delta":{"content":"x"}},{"index":1.0,"delta":{"content":"y"}},{"index":1e0,"delta":{"content":"z"}}]}` + "\n\n"},
	{"huge index", `data: {"choices":[{"index":12345678901234567890,"delta":{"content":"x"}}]}` + "\n\n"},
	{"index past int64", `data: {"choices":[{"index":9999999999999999999,"delta":{"content":"x"}}]}` + "\n\n"},
	{"index past float64's integers", `data: {"choices":[{"index":9007199254740993,"delta":{"content":"x"}}]}` + "\n\n"},
	{"usage of another type", `data: {"choices":[],"usage":5}` + "\n\n" + `data: {"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":2.5}}` + "\n\n"},
	{"choices of another type", `data: {"choices":{"0":{"delta":{"content":"x"}}}}` + "\n\n"},
	{"members given twice", `data: {"choices":[{"delta":{"content":"a","content":"b"}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"content":"a"}}],"choices":[]}` + "\n\n"},
	{"escaped keys", `data: {"choices":[{"delta":{"cont\u0065nt":"a"}}]}` + "\n\n" + `data: {"\u0065rror":{"message":"x"}}` + "\n\n"},
	{"keys in another case", `data: {"Choices":[{"delta":{"Content":"a"}}]}` + "\n\n"},
	{"deep nesting", `data: {"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"choices":[{"delta":{"content":"a"}}]}` + "\n\n"},
	{"numbers and literals skipped", `data: {"a":-0.5e+10,"b":[true,false,null,0,-1,1E3],"c":{"d":""},"choices":[]}` + "\n\n"},
	{"invalid numbers", `data: {"a":01,"choices":[]}` + "\n\n" + `data: {"a":1.,"choices":[]}` + "\n\n"},
	{"invalid escape", chunkLine(`{"content":"\x"}`)},
	{"control character in a string", "data: {\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}\n\n"},
}

// TestChunkReaderReadsAsTheSDK reads every stream with the chunkReader and
// with the SDK, which must agree chunk for chunk and error for error;
// whether the body arrives at once, in halves of what is asked or byte by
// byte (an event's empty line not there yet when its data line is read).
func TestChunkReaderReadsAsTheSDK(t *testing.T) {
	t.Parallel()
	arrivals := []struct {
		name string
		body func(io.Reader) io.Reader
	}{
		{"at once", func(r io.Reader) io.Reader { return r }},
		{"in halves", iotest.HalfReader},
		{"byte by byte", iotest.OneByteReader},
	}
	for _, tt := range streams {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, wantErr := readChunksWithSDK([]byte(tt.body))
			for _, arrival := range arrivals {
				got, gotErr := readChunksFrom(arrival.body(strings.NewReader(tt.body)))
				t.Run(arrival.name, func(t *testing.T) {
					sameResult(t, []byte(tt.body), got, gotErr, want, wantErr)
				})
			}
		})
	}
}

// TestParseChunkTakesTheUsualShape checks that the chunks servers send take
// the fast path, not the SDK's decoding: the point of parseChunk.
func TestParseChunkTakesTheUsualShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"text", chunkLine(`{"content":"Hi"}`), true},
		{"first chunk", chunkLine(`{"role":"assistant","content":"","refusal":null}`), true},
		{"escapes", chunkLine(`{"content":"a\nb \"c\" \u00e9"}`), true},
		{"tool call", chunkLine(`{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`), true},
		{"finish", `data: {"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`, true},
		{"usage", `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}}}`, true},
		{"error", `data: {"error":{"message":"x"}}`, false},
		{"surrogate pair", chunkLine(`{"content":"\ud83d\ude00"}`), false},
		{"not JSON", "data: x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := strings.TrimSpace(strings.TrimPrefix(tt.data, "data: "))
			var (
				c chunk
				p jsonParser
			)
			if got := p.parseChunk([]byte(data+"\n"), &c); got != tt.want {
				t.Errorf("parseChunk(%s) = %v, want %v", data, got, tt.want)
			}
		})
	}
}

func TestSSEReaderBoundsEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{"one long line", "data: " + strings.Repeat("x", maxEventSize) + "\n\n"},
		{"many lines", strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 9) + "\n"},
		{"a long line that is not data", ": " + strings.Repeat("x", maxEventSize) + "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := readChunks([]byte(tt.body))
			if !errors.Is(err, errEventTooLarge) {
				t.Errorf("error = %v, want %v", err, errEventTooLarge)
			}
		})
	}
	// Just under the bound is read.
	big := `data: {"choices":[{"delta":{"content":"` + strings.Repeat("x", maxEventSize-100) + `"}}]}` + "\n\n"
	got, err := readChunks([]byte(big))
	if err != nil || len(got) != 1 || len(got[0].choices[0].content) != maxEventSize-100 {
		t.Errorf("an event under the bound: %d chunks, error %v", len(got), err)
	}
}

// FuzzStreamDecoder holds the chunkReader to the SDK's reading of any
// stream: the same chunks, the same errors, whether the stream is there at
// once or arrives byte by byte.
func FuzzStreamDecoder(f *testing.F) {
	for _, tt := range streams {
		f.Add([]byte(tt.body))
	}
	for _, name := range []string{"openai_text_tools.sse", "openai_no_usage.sse"} {
		body, err := os.ReadFile("../llmtest/testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := readChunks(body)
		if errors.Is(gotErr, errEventTooLarge) {
			return // the SDK's bound is larger
		}
		want, wantErr := readChunksWithSDK(body)
		sameResult(t, body, got, gotErr, want, wantErr)
		got, gotErr = readChunksFrom(iotest.OneByteReader(bytes.NewReader(body)))
		sameResult(t, body, got, gotErr, want, wantErr)
	})
}

// FuzzParseChunk holds parseChunk to the SDK's decoding of any data it
// takes, after the data is overwritten.
func FuzzParseChunk(f *testing.F) {
	for _, tt := range streams {
		for event := range strings.SplitSeq(tt.body, "\n\n") {
			if data, ok := strings.CutPrefix(event, "data: "); ok {
				f.Add([]byte(data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			c chunk
			p jsonParser
		)
		event := bytes.Clone(data)
		if bytes.HasPrefix(event, []byte("[DONE]")) || !p.parseChunk(event, &c) {
			return
		}
		// The chunk's strings outlive the event, whose buffer the next
		// event overwrites.
		for i := range event {
			event[i] = 'x'
		}
		var want chunk
		if err := decodeWithSDK(sseEvent{data: data}, &want); err != nil {
			t.Fatalf("parseChunk took %q, which the SDK refuses: %v", data, err)
		}
		sameResult(t, data, []chunk{cloneChunk(&c)}, nil, []chunk{cloneChunk(&want)}, nil)
	})
}

// TestStringsEndWhereverTheyEnd reads strings with an escape, a control
// character or their end at every position of the first words of eight
// bytes parseChunk looks at, in a key, in a skipped value and in a delta's
// content, as the SDK does.
func TestStringsEndWhereverTheyEnd(t *testing.T) {
	t.Parallel()
	specials := []string{``, `\"`, `\\`, `\n`, `\u00e9`, "\t", "\x1f", "\x7f", "\xff", `é`}
	var body strings.Builder
	for n := range 20 {
		for _, special := range specials {
			text := strings.Repeat("a", n) + special + strings.Repeat("b", 20-n)
			short := strings.Repeat("c", n) + special
			body.WriteString(`data: {"id":"` + text + `","` + short + `":"` + short + `","choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n")
			body.WriteString(`data: {"choices":[{"delta":{"content":"` + short + `"}}]}` + "\n\n")
		}
	}
	input := []byte(body.String())
	got, gotErr := readChunks(input)
	want, wantErr := readChunksWithSDK(input)
	sameResult(t, input, got, gotErr, want, wantErr)
}
