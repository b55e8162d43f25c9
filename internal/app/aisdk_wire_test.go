package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/answerstream"
	"github.com/docsmith/docsmith/internal/assistant"
)

// The answer the wire server streams: a partial status, two quoted sources,
// one sentence its source holds and one it does not. The Node client tests
// (clients/aisdk/grounded.test.mjs) check where each piece lands.
const (
	wireThreadID  = "thr_00000000000000000000000000000abc"
	wireMessageID = "msg_wire"
	wireText      = "Run `tern sync --exclude` to skip files [1]. It retries 42 times [2]."
)

// wireServer serves that answer in both formats, /v1 (data stream) and /v2
// (UI message stream), whatever the request: the answer's events, as the
// assistant emits them, through the same adapter as the real endpoints.
func wireServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1", func(w http.ResponseWriter, _ *http.Request) {
		writeWireAnswer(t, answerstream.New(aisdk.NewDataStream(w)))
	})
	mux.HandleFunc("POST /v2", func(w http.ResponseWriter, _ *http.Request) {
		writeWireAnswer(t, answerstream.New(aisdk.NewUIMessageStream(w)))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// wirePartial is the status of the wire answer.
var wirePartial = assistant.AnswerStatus{Status: assistant.StatusPartial, Note: "The docs don't mention Datadog.", Missing: []string{"Datadog"}}

func writeWireAnswer(t *testing.T, s assistant.Sink) {
	srcs := []assistant.Source{
		{ID: "src_1", URL: "https://tern.example/docs/guides/sync#exclude-files", Title: "Sync › Exclude files",
			Path: "guides/sync", Quote: "Pass `--exclude` to tern sync, or list patterns in a .ternignore file."},
		{ID: "src_2", URL: "https://tern.example/docs/guides/conflicts", Title: "Conflicts",
			Path: "guides/conflicts", Quote: "When both sides changed, tern keeps both copies."},
	}
	first := "Run `tern sync --exclude` to skip files [1]. "
	steps := []func() error{
		func() error { return s.Start(wireMessageID, wireThreadID) },
		func() error { return s.Sources(srcs) },
		func() error { return s.Status(wirePartial) },
		func() error { return s.TextStart("txt_0") },
		func() error { return s.BufferTextDelta("txt_0", first) },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", Start: 0, End: utf16Len(first) - 1, Sources: []string{"src_1"}, Supported: true})
		},
		s.Flush,
		func() error { return s.BufferTextDelta("txt_0", wireText[len(first):]) },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", Start: utf16Len(first), End: utf16Len(wireText), Sources: []string{"src_2"}, Missing: []string{"42"}})
		},
		func() error { return s.TextEnd("txt_0") },
		func() error { return s.Finish(assistant.Finish{ThreadID: wireThreadID, Status: wirePartial}) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Errorf("wire server: %v", err)
			return
		}
	}
}

// utf16Len is the length of s as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}
