package aisdk

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// marshalled is v as encoding/json's Encoder writes it with HTML escaping
// off, the final newline dropped.
func marshalled(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FuzzAppendString: a string is written byte for byte as encoding/json
// writes it with HTML escaping off.
func FuzzAppendString(f *testing.F) {
	f.Add(nasty)
	f.Add("\xff\xfe\xc3(\xe2\x80\u2028\u2029\x7f<>&\b\f\v\x00")
	f.Add("plain text")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), marshalled(t, s); got != want {
			t.Fatalf("appendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

// The chunks as the encoders wrote them before they appended JSON
// themselves: structs marshalled by encoding/json. The encoders must write
// the same bytes.
type (
	refMetadata struct {
		ThreadID string    `json:"threadId,omitempty"`
		Usage    *refUsage `json:"usage,omitempty"`
	}
	refUsage struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		TotalTokens  int `json:"totalTokens"`
	}
	refUIChunk struct {
		Type            string       `json:"type"`
		MessageID       string       `json:"messageId,omitempty"`
		MessageMetadata *refMetadata `json:"messageMetadata,omitempty"`
	}
	refUISource struct {
		Type     string `json:"type"`
		SourceID string `json:"sourceId"`
		URL      string `json:"url"`
		Title    string `json:"title,omitempty"`
	}
	refUIText struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	refUIDelta struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Delta string `json:"delta"`
	}
	refUIFinish struct {
		Type            string       `json:"type"`
		MessageMetadata *refMetadata `json:"messageMetadata,omitempty"`
		ThreadID        string       `json:"threadId,omitempty"`
	}
	refUIError struct {
		Type      string `json:"type"`
		ErrorText string `json:"errorText"`
	}
	refDSSource struct {
		SourceType string `json:"sourceType"`
		ID         string `json:"id"`
		URL        string `json:"url"`
		Title      string `json:"title,omitempty"`
	}
	refDSUsage struct {
		PromptTokens     int `json:"promptTokens"`
		CompletionTokens int `json:"completionTokens"`
	}
	refDSFinishStep struct {
		FinishReason string      `json:"finishReason"`
		Usage        *refDSUsage `json:"usage,omitempty"`
		IsContinued  bool        `json:"isContinued"`
	}
	refDSFinish struct {
		FinishReason string      `json:"finishReason"`
		Usage        *refDSUsage `json:"usage,omitempty"`
		ThreadID     string      `json:"threadId,omitempty"`
	}
)

// FuzzChunksAsEncodingJSON streams arbitrary values through every method of
// both encoders and compares the bytes with the reference structs
// marshalled by encoding/json.
func FuzzChunksAsEncodingJSON(f *testing.F) {
	f.Add("msg_1", "thr_1", "src_1", "https://x.example/a?b=<c>&d", "Title › Sub", "text \"q\"\n", "boom", 812, 41, true, false)
	f.Add("", "", "", "", "", "", "", 0, 0, false, true)
	f.Add("\xff", "\u2028", "\x00", "é", "中文🚀", nasty, "\\", -1, 1<<40, true, true)
	f.Fuzz(func(t *testing.T, msgID, thrID, srcID, url, title, text, errText string, in, out int, withUsage, fail bool) {
		var usage *Usage
		if withUsage {
			usage = &Usage{InputTokens: in, OutputTokens: out}
		}
		src := Source{ID: srcID, URL: url, Title: title}
		run := func(s Stream) {
			steps := []func() error{
				func() error { return s.Start(msgID, thrID) },
				func() error { return s.Sources([]Source{src, src}) },
				func() error { return s.TextStart("a") },
				func() error { return s.TextDelta("a", text) },
				func() error { return s.Heartbeat() },
				func() error { return s.Text("b", text, "", errText) },
			}
			if fail {
				steps = append(steps, func() error { return s.Error(errText) })
			} else {
				steps = append(steps, func() error { return s.Finish(thrID, true, usage) })
			}
			if err := do(steps...); err != nil {
				t.Fatal(err)
			}
		}

		// The UI message stream.
		var want strings.Builder
		event := func(v any) { want.WriteString("data: " + marshalled(t, v) + "\n\n") }
		meta := func(u *Usage) *refMetadata {
			if thrID == "" && u == nil {
				return nil
			}
			m := &refMetadata{ThreadID: thrID}
			if u != nil {
				m.Usage = &refUsage{u.InputTokens, u.OutputTokens, u.InputTokens + u.OutputTokens}
			}
			return m
		}
		event(refUIChunk{Type: "start", MessageID: msgID, MessageMetadata: meta(nil)})
		event(refUIChunk{Type: "start-step"})
		for range 2 {
			event(refUISource{Type: "source-url", SourceID: srcID, URL: url, Title: title})
		}
		event(refUIText{Type: "text-start", ID: "a"})
		if text != "" {
			event(refUIDelta{Type: "text-delta", ID: "a", Delta: text})
		}
		want.WriteString(": ping\n\n")
		event(refUIText{Type: "text-start", ID: "b"})
		for _, p := range []string{text, errText} {
			if p != "" {
				event(refUIDelta{Type: "text-delta", ID: "b", Delta: p})
			}
		}
		event(refUIText{Type: "text-end", ID: "b"})
		if fail {
			event(refUIError{Type: "error", ErrorText: errorText(errText)})
		} else {
			event(refUIText{Type: "text-end", ID: "a"})
			event(refUIChunk{Type: "finish-step"})
			event(refUIFinish{Type: "finish", MessageMetadata: meta(usage), ThreadID: thrID})
		}
		want.WriteString("data: [DONE]\n\n")
		rec := httptest.NewRecorder()
		run(NewUIMessageStream(rec))
		if got := rec.Body.String(); got != want.String() {
			t.Fatalf("v2 wrote\n%s\nencoding/json writes\n%s", got, want.String())
		}

		// The data stream.
		want.Reset()
		line := func(code string, v any) { want.WriteString(code + ":" + marshalled(t, v) + "\n") }
		if msgID != "" {
			line("f", map[string]string{"messageId": msgID})
		}
		if thrID != "" {
			line("8", []map[string]string{{"threadId": thrID}})
		}
		for range 2 {
			line("h", refDSSource{SourceType: "url", ID: srcID, URL: url, Title: title})
		}
		if text != "" {
			line("0", text)
		}
		want.WriteString("\n") // the heartbeat
		for _, p := range []string{text, errText} {
			if p != "" {
				line("0", p)
			}
		}
		if fail {
			line("3", errorText(errText))
		} else {
			var u *refDSUsage
			if usage != nil {
				u = &refDSUsage{usage.InputTokens, usage.OutputTokens}
			}
			if msgID != "" {
				line("e", refDSFinishStep{FinishReason: "stop", Usage: u})
			}
			line("d", refDSFinish{FinishReason: "stop", Usage: u, ThreadID: thrID})
		}
		rec = httptest.NewRecorder()
		run(NewDataStream(rec))
		if got := rec.Body.String(); got != want.String() {
			t.Fatalf("v1 wrote\n%s\nencoding/json writes\n%s", got, want.String())
		}
	})
}
