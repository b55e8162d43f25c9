package aisdk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

const (
	threadID  = "thr_0123456789abcdef"
	messageID = "msg_7Qk2"
)

// docsSources are the two citations of the reference answer in each protocol.
func docsSources() []Source {
	return []Source{
		{ID: "src_1", URL: "https://docs.example.com/quickstart", Title: "Quickstart"},
		{ID: "src_2", URL: "https://docs.example.com/deploy", Title: "Deploying your site"},
	}
}

// quotedSources are citations that carry a quote and a page path in their
// provider metadata, the second written with white space that must go.
func quotedSources() []Source {
	return []Source{
		{ID: "src_1", URL: "https://docs.example.com/deploy#cli", Title: "Deploy › CLI",
			ProviderMetadata: json.RawMessage(`{"example":{"quote":"Run acme deploy from the project root.","path":"deploy"}}`)},
		{ID: "src_2", URL: "https://docs.example.com/limits", Title: "Limits",
			ProviderMetadata: json.RawMessage(`{"example":{"quote":"Builds time out after 10 minutes.","path":"limits"}}`)},
	}
}

// nasty is text that must survive both framings unchanged: quotes,
// backslashes, newlines, HTML, non-ASCII, JS line separators and strings that
// look like framing.
const nasty = "He said \"hi\" \\ 'there'\nline 2\r\nCRLF\ttab </script><b>&amp;</b> é 中文 🚀 \u2028\u2029 \x00\x1f" +
	"\n\ndata: [DONE]\n\n0:\"fake\"\n3:\"boom\"\n: ping\n"

type goldenCase struct {
	name     string // testdata/<protocol>_<name>.golden
	topLevel bool   // passed to Finish; the v2 strict-client setting off
	run      func(s Stream, topLevel bool) error
	want     transcript // protocol-independent; TopLevelThreadID is v2 only
}

func goldenCases() []goldenCase {
	answer := func(s Stream, topLevel bool) error {
		return do(
			func() error { return s.Start(messageID, threadID) },
			func() error { return s.Sources(docsSources()) },
			func() error { return s.TextStart("txt_0") },
			func() error { return s.TextDelta("txt_0", "To deploy, ") },
			func() error { return s.TextDelta("txt_0", "run `acme deploy` from your project root [1]. ") },
			func() error { return s.TextDelta("txt_0", "See the quickstart first [2].") },
			func() error { return s.TextEnd("txt_0") },
			func() error { return s.Finish(threadID, topLevel, &Usage{InputTokens: 812, OutputTokens: 41}) },
		)
	}
	answerWant := transcript{
		MessageID: messageID, ThreadID: threadID, Sources: docsSources(),
		Text:     "To deploy, run `acme deploy` from your project root [1]. See the quickstart first [2].",
		Finished: true, FinishThreadID: threadID, Usage: &Usage{InputTokens: 812, OutputTokens: 41},
	}
	topWant := answerWant
	topWant.TopLevelThreadID = threadID
	return []goldenCase{
		{name: "answer", run: answer, want: answerWant},
		{name: "answer_toplevel_threadid", topLevel: true, run: answer, want: topWant},
		{
			name: "error_after_start",
			run: func(s Stream, _ bool) error {
				return do(
					func() error { return s.Start(messageID, threadID) },
					func() error { return s.Sources(docsSources()[:1]) },
					func() error { return s.TextStart("txt_0") },
					func() error { return s.TextDelta("txt_0", "To deploy, ") },
					func() error { return s.Error("Retrieval backend unavailable") },
				)
			},
			want: transcript{
				MessageID: messageID, ThreadID: threadID, Sources: docsSources()[:1],
				Text: "To deploy, ", ErrorText: "Retrieval backend unavailable",
			},
		},
		{
			// Sources with provider metadata, a status decided before the
			// text, a data part per checked sentence while the text
			// streams, and the status again in the finish metadata.
			name: "data_parts",
			run: func(s Stream, _ bool) error {
				status := json.RawMessage(`{"status":"partial","note":"Only part of it is covered.","missing":["Datadog"]}`)
				return do(
					func() error { return s.Start(messageID, threadID) },
					func() error { return s.Sources(quotedSources()) },
					func() error { return s.Data("answer-status", "answer-status", status) },
					func() error { return s.TextStart("txt_0") },
					func() error { return s.TextDelta("txt_0", "Run `acme deploy` [1]. ") },
					func() error {
						return s.BufferData("grounding", "g_0", json.RawMessage(`{"textId":"txt_0","start":0,"end":22,"sources":["src_1"],"supported":true}`))
					},
					func() error { return s.TextDelta("txt_0", "It takes 42 seconds [2].") },
					func() error {
						return s.Data("grounding", "g_1", json.RawMessage("{\n \"textId\": \"txt_0\", \"start\": 23, \"end\": 47,\n \"sources\": [\"src_2\"], \"supported\": false, \"missing\": [\"42\"]\n}"))
					},
					func() error { return s.TextEnd("txt_0") },
					func() error {
						return s.Finish(threadID, false, nil, Member{Key: "answerStatus", Value: status})
					},
				)
			},
			want: transcript{
				MessageID: messageID, ThreadID: threadID, Sources: quotedSources(),
				Text: "Run `acme deploy` [1]. It takes 42 seconds [2].",
				Data: []dataPart{
					{Key: "answerStatus", ID: "answer-status", Value: `{"status":"partial","note":"Only part of it is covered.","missing":["Datadog"]}`},
					{Key: "grounding", ID: "g_0", Value: `{"textId":"txt_0","start":0,"end":22,"sources":["src_1"],"supported":true}`},
					{Key: "grounding", ID: "g_1", Value: `{"textId":"txt_0","start":23,"end":47,"sources":["src_2"],"supported":false,"missing":["42"]}`},
				},
				Finished: true, FinishThreadID: threadID,
				FinishMetadata: map[string]string{"answerStatus": `{"status":"partial","note":"Only part of it is covered.","missing":["Datadog"]}`},
			},
		},
		{
			name: "heartbeat",
			run: func(s Stream, _ bool) error {
				return do(
					s.Heartbeat,
					func() error { return s.Start(messageID, threadID) },
					s.Heartbeat,
					s.Heartbeat,
					func() error { return s.Sources(docsSources()) },
					func() error { return s.TextStart("txt_0") },
					func() error { return s.TextDelta("txt_0", "Run `acme deploy`") },
					s.Heartbeat,
					func() error { return s.TextDelta("txt_0", " [1].") },
					func() error { return s.TextEnd("txt_0") },
					func() error { return s.Finish(threadID, false, nil) },
				)
			},
			want: transcript{
				MessageID: messageID, ThreadID: threadID, Sources: docsSources(),
				Text: "Run `acme deploy` [1].", Finished: true, FinishThreadID: threadID, Heartbeats: 4,
			},
		},
		{
			// No Start, no thread, two text blocks, the second left open:
			// Finish must close it (v2) and v1 joins the blocks.
			name: "minimal_two_blocks",
			run: func(s Stream, _ bool) error {
				return do(
					func() error { return s.TextStart("txt_0") },
					func() error { return s.TextDelta("txt_0", "First block. ") },
					func() error { return s.TextDelta("txt_0", "") },
					func() error { return s.TextEnd("txt_0") },
					func() error { return s.TextStart("txt_1") },
					func() error { return s.TextDelta("txt_1", "Second block.") },
					func() error { return s.Finish("", true, nil) },
				)
			},
			want: transcript{Text: "First block. Second block.", Finished: true},
		},
		{
			name: "unicode",
			run: func(s Stream, _ bool) error {
				return do(
					func() error { return s.Start("msg_\"ü\"", "thr_<&>") },
					func() error {
						return s.Sources([]Source{
							{ID: "src_\n1", URL: "https://docs.example.com/a?x=1&y=<2>#é", Title: nasty},
							{ID: "src_2", URL: "https://docs.example.com/b"}, // no title
						})
					},
					func() error { return s.TextStart("txt_0") },
					func() error { return s.TextDelta("txt_0", nasty) },
					func() error { return s.TextDelta("txt_0", "😀 end") },
					func() error { return s.TextEnd("txt_0") },
					func() error { return s.Finish("thr_<&>", false, nil) },
				)
			},
			want: transcript{
				MessageID: "msg_\"ü\"", ThreadID: "thr_<&>",
				Sources: []Source{
					{ID: "src_\n1", URL: "https://docs.example.com/a?x=1&y=<2>#é", Title: nasty},
					{ID: "src_2", URL: "https://docs.example.com/b"},
				},
				Text: nasty + "😀 end", Finished: true, FinishThreadID: "thr_<&>",
			},
		},
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		for _, tc := range goldenCases() {
			t.Run(p.name+"_"+tc.name, func(t *testing.T) {
				t.Parallel()
				rec := httptest.NewRecorder()
				if err := tc.run(p.new(rec), tc.topLevel); err != nil {
					t.Fatalf("run: %v", err)
				}
				got := rec.Body.String()
				path := filepath.Join("testdata", p.name+"_"+tc.name+".golden")
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
				}

				tr, err := p.parse(got, tc.topLevel)
				if err != nil {
					t.Fatalf("parse: %v\n%s", err, got)
				}
				wantTr := tc.want
				if p.name == "v2" {
					if !tr.Done {
						t.Error("v2 stream does not end with data: [DONE]")
					}
					tr.Done = false
				} else {
					wantTr.TopLevelThreadID = ""
					wantTr.Data = slices.Clone(wantTr.Data)
					for i := range wantTr.Data {
						wantTr.Data[i].ID = "" // no ids in v1
					}
				}
				if !reflect.DeepEqual(tr, wantTr) {
					t.Errorf("transcript\ngot  %+v\nwant %+v", tr, wantTr)
				}
			})
		}
	}
}

// TestDataStreamIgnoresTopLevelFlag: the flag is about a v2 chunk key; v1
// always carries threadId in d: (dropped by the client, harmless).
func TestDataStreamIgnoresTopLevelFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			with, without := httptest.NewRecorder(), httptest.NewRecorder()
			if err := tc.run(NewDataStream(with), true); err != nil {
				t.Fatal(err)
			}
			if err := tc.run(NewDataStream(without), false); err != nil {
				t.Fatal(err)
			}
			if with.Body.String() != without.Body.String() {
				t.Errorf("output depends on topLevelThreadID:\n%s\n---\n%s", with.Body, without.Body)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		new  func(http.ResponseWriter) Stream
		want map[string]string
	}{
		{
			name: "v1",
			new:  func(w http.ResponseWriter) Stream { return NewDataStream(w) },
			want: map[string]string{
				"Content-Type":            "text/plain; charset=utf-8",
				"X-Vercel-Ai-Data-Stream": "v1",
				"Cache-Control":           "no-store",
				"X-Accel-Buffering":       "no",
			},
		},
		{
			name: "v2",
			new:  func(w http.ResponseWriter) Stream { return NewUIMessageStream(w) },
			want: map[string]string{
				"Content-Type":                  "text/event-stream",
				"X-Vercel-Ai-Ui-Message-Stream": "v1",
				"Cache-Control":                 "no-cache, no-store",
				"Connection":                    "keep-alive",
				"X-Accel-Buffering":             "no",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			// The caller's headers, set before the first call.
			rec.Header().Set("X-Thread-Id", threadID)
			rec.Header().Set("Access-Control-Expose-Headers", "x-thread-id")
			rec.Header().Set("Content-Type", "application/json") // overridden by the stream
			s := tc.new(rec)
			if s.Started() {
				t.Fatal("Started before any call")
			}
			if err := s.Heartbeat(); err != nil {
				t.Fatal(err)
			}
			if !s.Started() {
				t.Fatal("not Started after the first byte")
			}
			rec.Header().Set("X-Late", "1") // too late: the status line is out
			res := rec.Result()
			if res.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", res.StatusCode)
			}
			for k, v := range tc.want {
				if got := res.Header.Values(k); len(got) != 1 || got[0] != v {
					t.Errorf("header %s = %q, want [%q]", k, got, v)
				}
			}
			if got := res.Header.Get("X-Thread-Id"); got != threadID {
				t.Errorf("caller header X-Thread-Id = %q, want %q", got, threadID)
			}
			if got := res.Header.Get("Access-Control-Expose-Headers"); got != "x-thread-id" {
				t.Errorf("caller header Access-Control-Expose-Headers = %q", got)
			}
			if res.Header.Get("X-Late") != "" {
				t.Error("a header set after the first byte was sent")
			}
		})
	}
}

// TestFraming checks every line of every transcript independently of the
// golden files: v2 lines are "data: <JSON object with a string type>",
// "data: [DONE]", an SSE comment or the blank separator; v1 lines are
// "<code>:<JSON>" or blank (a heartbeat).
func TestFraming(t *testing.T) {
	t.Parallel()
	v1Line := regexp.MustCompile(`^([0-9a-k]):(.*)$`)
	for _, p := range protocols() {
		for _, tc := range goldenCases() {
			t.Run(p.name+"_"+tc.name, func(t *testing.T) {
				t.Parallel()
				rec := httptest.NewRecorder()
				if err := tc.run(p.new(rec), tc.topLevel); err != nil {
					t.Fatal(err)
				}
				body := rec.Body.String()
				if !strings.HasSuffix(body, "\n") {
					t.Fatalf("body does not end with a newline")
				}
				for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
					if line == "" {
						continue
					}
					switch p.name {
					case "v2":
						if strings.HasPrefix(line, ": ") || line == "data: [DONE]" {
							continue
						}
						data, ok := strings.CutPrefix(line, "data: ")
						if !ok {
							t.Fatalf("line %d is not an SSE data line: %q", i, line)
						}
						var c struct {
							Type *string `json:"type"`
						}
						if !json.Valid([]byte(data)) || json.Unmarshal([]byte(data), &c) != nil || c.Type == nil || *c.Type == "" {
							t.Fatalf("line %d is not a JSON chunk with a type: %q", i, line)
						}
					case "v1":
						m := v1Line.FindStringSubmatch(line)
						if m == nil || !json.Valid([]byte(m[2])) {
							t.Fatalf("line %d is not <code>:<JSON>: %q", i, line)
						}
					}
				}
			})
		}
	}
}

// TestRoundTrip sends awkward strings as text, titles and ids; the parsed
// stream must give them back exactly (invalid UTF-8 becomes U+FFFD per byte,
// as encoding/json does).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	texts := []struct{ name, in, want string }{
		{"ascii", "plain text", "plain text"},
		{"quotes", `"double" 'single' \backslash\ \"escaped\"`, `"double" 'single' \backslash\ \"escaped\"`},
		{"newlines", "a\nb\r\nc\rd\n\n\n", "a\nb\r\nc\rd\n\n\n"},
		{"html", "<script>alert('x')</script> & &amp; <!-- -->", "<script>alert('x')</script> & &amp; <!-- -->"},
		{"unicode", "é 中文 🚀 👩‍👩‍👧 \u200b \ufeff", "é 中文 🚀 👩‍👩‍👧 \u200b \ufeff"},
		{"line separators", "a\u2028b\u2029c", "a\u2028b\u2029c"},
		{"controls", "\x00\x01\x1f\x7f", "\x00\x01\x1f\x7f"},
		{"sse injection", "x\n\ndata: {\"type\":\"error\",\"errorText\":\"pwned\"}\n\n", "x\n\ndata: {\"type\":\"error\",\"errorText\":\"pwned\"}\n\n"},
		{"v1 injection", "x\n3:\"pwned\"\n", "x\n3:\"pwned\"\n"},
		{"invalid utf-8", "a\xffb\xc3", "a\ufffdb\ufffd"},
		{"everything", nasty, nasty},
	}
	for _, p := range protocols() {
		for _, tc := range texts {
			t.Run(p.name+"_"+tc.name, func(t *testing.T) {
				t.Parallel()
				rec := httptest.NewRecorder()
				s := p.new(rec)
				err := do(
					func() error { return s.Start(tc.in, tc.in) },
					func() error { return s.Sources([]Source{{ID: tc.in, URL: tc.in, Title: tc.in}}) },
					func() error { return s.TextStart(tc.in) },
					func() error { return s.TextDelta(tc.in, tc.in) },
					func() error { return s.TextDelta(tc.in, tc.in) },
					func() error { return s.Finish(tc.in, true, nil) },
				)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := p.parse(rec.Body.String(), true)
				if err != nil {
					t.Fatalf("parse: %v\n%s", err, rec.Body)
				}
				if tr.Text != tc.want+tc.want {
					t.Errorf("text %q, want %q", tr.Text, tc.want+tc.want)
				}
				if want := (Source{ID: tc.want, URL: tc.want, Title: tc.want}); len(tr.Sources) != 1 || !reflect.DeepEqual(tr.Sources[0], want) {
					t.Errorf("sources %q, want [%q]", tr.Sources, want)
				}
				if tr.ThreadID != tc.want || tr.FinishThreadID != tc.want {
					t.Errorf("threadId %q / %q, want %q", tr.ThreadID, tr.FinishThreadID, tc.want)
				}
				if p.name == "v2" && (tr.MessageID != tc.want || tr.TopLevelThreadID != tc.want) {
					t.Errorf("messageId %q, top-level threadId %q, want %q", tr.MessageID, tr.TopLevelThreadID, tc.want)
				}
			})
		}
	}
}

// TestFlushes runs a real server whose handler waits until the client has
// read the first event, so a buffered stream deadlocks (and times out). The
// handler also outlives the server's WriteTimeout, which the stream must
// clear.
func TestFlushes(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			const writeTimeout = 100 * time.Millisecond
			firstRead := make(chan struct{})
			handlerErr := make(chan error, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := p.new(w)
				handlerErr <- func() error {
					if err := s.Start(messageID, threadID); err != nil {
						return err
					}
					select {
					case <-firstRead:
					case <-r.Context().Done():
						return errors.New("client gave up before reading the first event: not flushed")
					}
					time.Sleep(3 * writeTimeout) // past the server's write deadline
					return do(
						func() error { return s.Sources(docsSources()) },
						func() error { return s.TextStart("t") },
						func() error { return s.TextDelta("t", "late text") },
						func() error { return s.Finish(threadID, false, nil) },
					)
				}()
			}))
			srv.Config.WriteTimeout = writeTimeout
			srv.Start()
			defer srv.Close()

			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.Header.Get("X-Accel-Buffering") != "no" {
				t.Errorf("X-Accel-Buffering = %q", res.Header.Get("X-Accel-Buffering"))
			}
			if p.name == "v2" && len(res.Header.Values("Connection")) > 1 {
				t.Errorf("Connection header repeated: %q", res.Header.Values("Connection"))
			}
			br := bufio.NewReader(res.Body)
			first, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the first event: %v", err)
			}
			if !strings.Contains(first, messageID) {
				t.Errorf("first line %q lacks the message id", first)
			}
			close(firstRead)
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("reading the rest: %v", err)
			}
			if err := <-handlerErr; err != nil {
				t.Fatalf("handler: %v", err)
			}
			tr, err := p.parse(first+string(rest), false)
			if err != nil {
				t.Fatalf("parse: %v\n%s%s", err, first, rest)
			}
			if tr.Text != "late text" || !tr.Finished || len(tr.Sources) != 2 {
				t.Errorf("incomplete stream: %+v", tr)
			}
		})
	}
}

// TestSequence: calls the protocols do not allow fail with ErrSequence or
// ErrClosed and write nothing.
func TestSequence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(Stream) error
		bad   func(Stream) error
		want  error
	}{
		{"delta before text-start", nil, func(s Stream) error { return s.TextDelta("t", "x") }, ErrSequence},
		{"end before text-start", nil, func(s Stream) error { return s.TextEnd("t") }, ErrSequence},
		{"delta for another block", func(s Stream) error { return s.TextStart("a") }, func(s Stream) error { return s.TextDelta("b", "x") }, ErrSequence},
		{"text-start twice", func(s Stream) error { return s.TextStart("a") }, func(s Stream) error { return s.TextStart("a") }, ErrSequence},
		{"delta after text-end", func(s Stream) error {
			return do(func() error { return s.TextStart("a") }, func() error { return s.TextEnd("a") })
		}, func(s Stream) error { return s.TextDelta("a", "x") }, ErrSequence},
		{"start twice", func(s Stream) error { return s.Start("m", "t") }, func(s Stream) error { return s.Start("m", "t") }, ErrSequence},
		{"start after sources", func(s Stream) error { return s.Sources(docsSources()) }, func(s Stream) error { return s.Start("m", "t") }, ErrSequence},
		{"start after text", func(s Stream) error { return s.TextStart("a") }, func(s Stream) error { return s.Start("m", "t") }, ErrSequence},
		{"anything after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Heartbeat() }, ErrClosed},
		{"finish twice", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Finish("t", false, nil) }, ErrClosed},
		{"error after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Error("x") }, ErrClosed},
		{"sources after error", func(s Stream) error { return s.Error("x") }, func(s Stream) error { return s.Sources(docsSources()) }, ErrClosed},
		{"text after error", func(s Stream) error { return s.Error("x") }, func(s Stream) error { return s.TextStart("a") }, ErrClosed},
		{"whole text for an open block", func(s Stream) error { return s.TextStart("a") }, func(s Stream) error { return s.Text("a", "x") }, ErrSequence},
		{"whole text after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Text("a", "x") }, ErrClosed},
		{"buffered delta before text-start", nil, func(s Stream) error { return s.BufferTextDelta("t", "x") }, ErrSequence},
		{"buffered delta after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.BufferTextDelta("t", "x") }, ErrClosed},
		{"flush after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Flush() }, ErrClosed},
		{"start after data", func(s Stream) error { return s.Data("x", "", json.RawMessage(`1`)) }, func(s Stream) error { return s.Start("m", "t") }, ErrSequence},
		{"data after finish", func(s Stream) error { return s.Finish("t", false, nil) }, func(s Stream) error { return s.Data("x", "", json.RawMessage(`1`)) }, ErrClosed},
		{"data with an empty name", nil, func(s Stream) error { return s.Data("", "", json.RawMessage(`1`)) }, ErrInvalid},
		{"data with an upper-case name", nil, func(s Stream) error { return s.Data("answerStatus", "", json.RawMessage(`1`)) }, ErrInvalid},
		{"data with a name that is not a word", nil, func(s Stream) error { return s.Data("a\"b", "", json.RawMessage(`1`)) }, ErrInvalid},
		{"data with a doubled hyphen", nil, func(s Stream) error { return s.Data("a--b", "", json.RawMessage(`1`)) }, ErrInvalid},
		{"data with a trailing hyphen", nil, func(s Stream) error { return s.BufferData("a-", "", json.RawMessage(`1`)) }, ErrInvalid},
		{"data that is not JSON", nil, func(s Stream) error { return s.Data("x", "", json.RawMessage(`{"a":`)) }, ErrInvalid},
		{"data with no value", nil, func(s Stream) error { return s.Data("x", "", nil) }, ErrInvalid},
		{"provider metadata not an object", nil, func(s Stream) error {
			return s.Sources([]Source{{ID: "s", URL: "u", ProviderMetadata: json.RawMessage(`["x"]`)}})
		}, ErrInvalid},
		{"provider metadata of a string", nil, func(s Stream) error {
			return s.Sources([]Source{{ID: "s", URL: "u"}, {ID: "t", URL: "u", ProviderMetadata: json.RawMessage(`{"example":"x"}`)}})
		}, ErrInvalid},
		{"provider metadata of null", nil, func(s Stream) error {
			return s.BufferSources([]Source{{ID: "s", URL: "u", ProviderMetadata: json.RawMessage(`{"example":null}`)}})
		}, ErrInvalid},
		{"finish metadata with a reserved key", nil, func(s Stream) error {
			return s.Finish("t", false, nil, Member{Key: "threadId", Value: json.RawMessage(`"x"`)})
		}, ErrInvalid},
		{"finish metadata key twice", nil, func(s Stream) error {
			return s.Finish("t", false, nil, Member{Key: "a", Value: json.RawMessage(`1`)}, Member{Key: "a", Value: json.RawMessage(`2`)})
		}, ErrInvalid},
		{"finish metadata without a key", nil, func(s Stream) error {
			return s.Finish("t", false, nil, Member{Value: json.RawMessage(`1`)})
		}, ErrInvalid},
		{"finish metadata not JSON", nil, func(s Stream) error {
			return s.Finish("t", false, nil, Member{Key: "a", Value: json.RawMessage(`nope`)})
		}, ErrInvalid},
	}
	for _, p := range protocols() {
		for _, tc := range tests {
			t.Run(p.name+"_"+tc.name, func(t *testing.T) {
				t.Parallel()
				rec := httptest.NewRecorder()
				s := p.new(rec)
				if tc.setup != nil {
					if err := tc.setup(s); err != nil {
						t.Fatalf("setup: %v", err)
					}
				}
				before := rec.Body.String()
				if err := tc.bad(s); !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if rec.Body.String() != before {
					t.Errorf("a refused call wrote %q", strings.TrimPrefix(rec.Body.String(), before))
				}
				if _, err := p.parse(rec.Body.String(), false); err != nil {
					t.Errorf("stream invalid after a refused call: %v", err)
				}
			})
		}
	}
}

// TestTextAsDeltas: a whole text block written by Text is byte for byte the
// block that TextStart, TextDelta for each piece and TextEnd write, in one
// write.
func TestTextAsDeltas(t *testing.T) {
	t.Parallel()
	pieces := []string{"Intro:\n\n", "", "**Install** [1]\n\n> `npm i -g <cli>` & \"quotes\"\n", "Ünïcödé \u2028 ✓\n"}
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			run := func(text func(Stream) error) (string, int) {
				w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
				s := p.new(w)
				if err := do(
					func() error { return s.Start(messageID, threadID) },
					func() error { return s.Sources(docsSources()) },
					func() error { return text(s) },
					func() error { return s.Text("second") },
					func() error { return s.Finish(threadID, true, nil) },
				); err != nil {
					t.Fatal(err)
				}
				return w.Body.String(), w.writes
			}
			want, _ := run(func(s Stream) error {
				if err := s.TextStart("t"); err != nil {
					return err
				}
				for _, piece := range pieces {
					if err := s.TextDelta("t", piece); err != nil {
						return err
					}
				}
				return s.TextEnd("t")
			})
			got, writes := run(func(s Stream) error { return s.Text("t", pieces...) })
			if got != want {
				t.Errorf("Text wrote\n%s\nwant\n%s", got, want)
			}
			// Start, the sources, each text block, the finish: one write each
			// (the data stream writes nothing for an empty block).
			wantWrites := 5
			if p.name == "v1" {
				wantWrites = 4
			}
			if writes != wantWrites {
				t.Errorf("%d writes, want %d", writes, wantWrites)
			}
		})
	}
}

// TestBufferedDeltas: deltas held by BufferTextDelta are byte for byte
// what TextDelta writes, and go out in one write at Flush, or with the next
// call that writes, or at once when they outgrow the buffer.
func TestBufferedDeltas(t *testing.T) {
	t.Parallel()
	pieces := []string{"Intro:\n\n", "", "**Install** [1]\n\n> `npm i -g <cli>` & \"quotes\"\n", "Ünïcödé \u2028 ✓\n"}
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			// run writes the start, one text block through deltas, and the
			// finish, and returns the body and the writes of the text.
			run := func(deltas func(Stream) error) (string, int) {
				w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
				s := p.new(w)
				if err := do(
					func() error { return s.Start(messageID, threadID) },
					func() error { return s.TextStart("t") },
				); err != nil {
					t.Fatal(err)
				}
				before := w.writes
				if err := deltas(s); err != nil {
					t.Fatal(err)
				}
				writes := w.writes - before
				if err := s.Finish(threadID, true, nil); err != nil {
					t.Fatal(err)
				}
				return w.Body.String(), writes
			}
			each := func(write func(Stream, string, string) error) func(Stream) error {
				return func(s Stream) error {
					for _, piece := range pieces {
						if err := write(s, "t", piece); err != nil {
							return err
						}
					}
					return nil
				}
			}
			want, _ := run(each(Stream.TextDelta))
			got, writes := run(func(s Stream) error {
				if err := each(Stream.BufferTextDelta)(s); err != nil {
					return err
				}
				return do(s.Flush, s.Flush) // the second has nothing to write
			})
			if got != want || writes != 1 {
				t.Errorf("buffered deltas and Flush: %d writes of\n%s\nwant 1 write of\n%s", writes, got, want)
			}
			got, writes = run(each(Stream.BufferTextDelta))
			if got != want || writes != 0 {
				t.Errorf("buffered deltas and no Flush: %d writes before the finish, and\n%s\nwant 0, and\n%s", writes, got, want)
			}
			big := strings.Repeat("x", 100)
			_, writes = run(func(s Stream) error {
				for range 2 * initialBuffer / len(big) {
					if err := s.BufferTextDelta("t", big); err != nil {
						return err
					}
				}
				return nil
			})
			if writes == 0 {
				t.Errorf("%d bytes of deltas held without a write", 2*initialBuffer)
			}
		})
	}
}

// TestTextStartGoesOutWithTheFirstText: opening a text block writes
// nothing of its own; its event goes out with the block's first text.
func TestTextStartGoesOutWithTheFirstText(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
			s := p.new(w)
			if err := s.Start(messageID, threadID); err != nil {
				t.Fatal(err)
			}
			before := w.writes
			if err := s.TextStart("t"); err != nil {
				t.Fatal(err)
			}
			if w.writes != before {
				t.Fatalf("TextStart wrote on its own: %d writes", w.writes-before)
			}
			if err := s.TextDelta("t", "first"); err != nil {
				t.Fatal(err)
			}
			if w.writes != before+1 {
				t.Fatalf("the first text took %d writes, want 1 with the block's start", w.writes-before)
			}
		})
	}
}

// countingWriter counts the writes that reach the ResponseWriter.
type countingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.ResponseRecorder.Write(b)
}

// TestErrorTextDefault: an empty message would show as an empty error.
func TestErrorTextDefault(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			if err := p.new(rec).Error(""); err != nil {
				t.Fatal(err)
			}
			tr, err := p.parse(rec.Body.String(), false)
			if err != nil {
				t.Fatal(err)
			}
			if tr.ErrorText != defaultErrorText {
				t.Errorf("error text %q, want %q", tr.ErrorText, defaultErrorText)
			}
		})
	}
}

// TestWriteFailure: once the client is gone every call reports it, so the
// assistant stops generating.
func TestWriteFailure(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w := &failWriter{noFlushWriter: noFlushWriter{h: http.Header{}}}
			s := p.new(w)
			err := s.Start(messageID, threadID)
			if !errors.Is(err, errClientGone) {
				t.Fatalf("Start: err = %v, want the write error", err)
			}
			for name, call := range map[string]func() error{
				"Heartbeat": s.Heartbeat,
				"TextStart": func() error { return s.TextStart("a") },
				"Finish":    func() error { return s.Finish(threadID, false, nil) },
				"Error":     func() error { return s.Error("x") },
			} {
				if err := call(); !errors.Is(err, errClientGone) {
					t.Errorf("%s after a failed write: err = %v, want the write error", name, err)
				}
			}
			if w.writes != 1 {
				t.Errorf("%d writes after the connection failed, want 1 in all", w.writes)
			}
		})
	}
}

// TestWriterWithoutFlush: a ResponseWriter that can neither flush nor set a
// deadline (a wrapper without Unwrap) still gets a complete stream.
func TestWriterWithoutFlush(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w := &noFlushWriter{h: http.Header{}}
			tc := goldenCases()[0]
			if err := tc.run(p.new(w), false); err != nil {
				t.Fatal(err)
			}
			if w.code != http.StatusOK {
				t.Errorf("status %d", w.code)
			}
			tr, err := p.parse(w.buf.String(), false)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Text != tc.want.Text {
				t.Errorf("text %q", tr.Text)
			}
		})
	}
}

// TestConcurrentHeartbeat: a heartbeat ticker beside the writer must neither
// race nor split an event.
func TestConcurrentHeartbeat(t *testing.T) {
	t.Parallel()
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			s := p.new(rec)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						if err := s.Heartbeat(); err != nil {
							return // ErrClosed once the answer is done
						}
					}
				}
			})
			var want strings.Builder
			err := do(
				func() error { return s.Start(messageID, threadID) },
				func() error { return s.TextStart("t") },
				func() error {
					for i := range 200 {
						d := strings.Repeat("x", i%7) + "\n"
						want.WriteString(d)
						if err := s.TextDelta("t", d); err != nil {
							return err
						}
					}
					return nil
				},
				func() error { return s.Finish(threadID, false, nil) },
			)
			close(stop)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			tr, err := p.parse(rec.Body.String(), false)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Text != want.String() || !tr.Finished {
				t.Errorf("text or finish lost: finished=%v, %d of %d bytes", tr.Finished, len(tr.Text), want.Len())
			}
		})
	}
}

// TestProtocolsExamples: the reference answers of both protocols,
// byte for byte. (The v2 golden differs from §3.5 only by the usage it also
// passes, which lands in message.metadata.usage.)
func TestProtocolsExamples(t *testing.T) {
	t.Parallel()
	const v1 = `f:{"messageId":"msg_7Qk2"}
8:[{"threadId":"thr_0123456789abcdef"}]
h:{"sourceType":"url","id":"src_1","url":"https://docs.example.com/quickstart","title":"Quickstart"}
h:{"sourceType":"url","id":"src_2","url":"https://docs.example.com/deploy","title":"Deploying your site"}
0:"To deploy, "
0:"run ` + "`acme deploy`" + ` from your project root [1]. "
0:"See the quickstart first [2]."
e:{"finishReason":"stop","usage":{"promptTokens":812,"completionTokens":41},"isContinued":false}
d:{"finishReason":"stop","usage":{"promptTokens":812,"completionTokens":41},"threadId":"thr_0123456789abcdef"}
`
	const v2 = `data: {"type":"start","messageId":"msg_7Qk2","messageMetadata":{"threadId":"thr_0123456789abcdef"}}

data: {"type":"start-step"}

data: {"type":"source-url","sourceId":"src_1","url":"https://docs.example.com/quickstart","title":"Quickstart"}

data: {"type":"source-url","sourceId":"src_2","url":"https://docs.example.com/deploy","title":"Deploying your site"}

data: {"type":"text-start","id":"txt_0"}

data: {"type":"text-delta","id":"txt_0","delta":"To deploy, "}

data: {"type":"text-delta","id":"txt_0","delta":"run ` + "`acme deploy`" + ` from your project root [1]. "}

data: {"type":"text-delta","id":"txt_0","delta":"See the quickstart first [2]."}

data: {"type":"text-end","id":"txt_0"}

data: {"type":"finish-step"}

data: {"type":"finish","messageMetadata":{"threadId":"thr_0123456789abcdef"}}

data: [DONE]

`
	tests := []struct {
		name  string
		new   func(http.ResponseWriter) Stream
		usage *Usage
		want  string
	}{
		{"v1 §2.4", func(w http.ResponseWriter) Stream { return NewDataStream(w) }, &Usage{InputTokens: 812, OutputTokens: 41}, v1},
		{"v2 §3.5", func(w http.ResponseWriter) Stream { return NewUIMessageStream(w) }, nil, v2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			s := tc.new(rec)
			err := do(
				func() error { return s.Start(messageID, threadID) },
				func() error { return s.Sources(docsSources()) },
				func() error { return s.TextStart("txt_0") },
				func() error { return s.TextDelta("txt_0", "To deploy, ") },
				func() error { return s.TextDelta("txt_0", "run `acme deploy` from your project root [1]. ") },
				func() error { return s.TextDelta("txt_0", "See the quickstart first [2].") },
				func() error { return s.TextEnd("txt_0") },
				func() error { return s.Finish(threadID, false, tc.usage) },
			)
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestBufferedSourcesGoOutWithTheText: sources held by BufferSources are
// byte for byte what Sources writes, and go out with the text that follows,
// in that one write.
func TestBufferedSourcesGoOutWithTheText(t *testing.T) {
	t.Parallel()
	srcs := []Source{{ID: "src_1", URL: "https://docs.example/a", Title: "A › \"quoted\""}, {ID: "src_2", URL: "/b"}}
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			run := func(sources func(Stream, []Source) error) (string, int) {
				w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
				s := p.new(w)
				if err := s.Start(messageID, threadID); err != nil {
					t.Fatal(err)
				}
				before := w.writes
				if err := do(
					func() error { return sources(s, srcs) },
					func() error { return s.Text("t", "Quoted [1] and [2].") },
				); err != nil {
					t.Fatal(err)
				}
				writes := w.writes - before
				if err := s.Finish(threadID, false, nil); err != nil {
					t.Fatal(err)
				}
				return w.Body.String(), writes
			}
			want, _ := run(Stream.Sources)
			got, writes := run(Stream.BufferSources)
			if got != want || writes != 1 {
				t.Errorf("buffered sources: %d writes of\n%s\nwant 1 write of\n%s", writes, got, want)
			}
		})
	}
}

// TestFinishedStreamLeavesItsBuffer: a stream's event buffer goes back for
// reuse when the stream ends, so calls after the end must leave the body
// as it was, and the next stream's events must be its own.
func TestFinishedStreamLeavesItsBuffer(t *testing.T) {
	for _, p := range protocols() {
		t.Run(p.name, func(t *testing.T) {
			first := httptest.NewRecorder()
			s := p.new(first)
			if err := do(
				func() error { return s.Start(messageID, threadID) },
				func() error { return s.Text("t", "first answer") },
				func() error { return s.Finish(threadID, false, nil) },
			); err != nil {
				t.Fatal(err)
			}
			ended := first.Body.String()
			second := httptest.NewRecorder()
			next := p.new(second)
			if err := next.Start("msg_next", "thr_next"); err != nil {
				t.Fatal(err)
			}
			for _, late := range []func() error{s.Heartbeat, s.Flush, func() error { return s.Text("u", "late") }} {
				if err := late(); !errors.Is(err, ErrClosed) {
					t.Errorf("a call after Finish returned %v, want ErrClosed", err)
				}
			}
			if err := do(
				func() error { return next.Text("t", "second answer") },
				func() error { return next.Finish("thr_next", false, nil) },
			); err != nil {
				t.Fatal(err)
			}
			if first.Body.String() != ended {
				t.Errorf("the finished stream's body changed after its end:\n%s\nwas\n%s", first.Body.String(), ended)
			}
			if body := second.Body.String(); strings.Contains(body, "first answer") || !strings.Contains(body, "second answer") {
				t.Errorf("the next stream's body is not its own:\n%s", body)
			}
		})
	}
}
