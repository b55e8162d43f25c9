package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
)

// The answer the wire server streams: a partial status, two quoted sources,
// one sentence its source holds and one it does not. The Node client tests
// (clients/aisdk/grounded.test.mjs) check where each piece lands.
const (
	wireThreadID  = "thr_00000000000000000000000000000abc"
	wireMessageID = "msg_wire"
	wireText      = "Run `tern sync --exclude` to skip files [1]. It retries 42 times [2]."
	wireStatus    = `{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}`
)

// wireServer serves that answer in both formats, /v1 (data stream) and /v2
// (UI message stream), whatever the request.
func wireServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1", func(w http.ResponseWriter, _ *http.Request) { writeWireAnswer(t, aisdk.NewDataStream(w)) })
	mux.HandleFunc("POST /v2", func(w http.ResponseWriter, _ *http.Request) { writeWireAnswer(t, aisdk.NewUIMessageStream(w)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func writeWireAnswer(t *testing.T, st aisdk.Stream) {
	meta := func(quote, path string) json.RawMessage {
		b, err := json.Marshal(map[string]map[string]string{"docsmith": {"quote": quote, "path": path}})
		if err != nil {
			t.Error(err)
		}
		return b
	}
	srcs := []aisdk.Source{
		{ID: "src_1", URL: "https://tern.example/docs/guides/sync#exclude-files", Title: "Sync › Exclude files",
			ProviderMetadata: meta("Pass `--exclude` to tern sync, or list patterns in a .ternignore file.", "guides/sync")},
		{ID: "src_2", URL: "https://tern.example/docs/guides/conflicts", Title: "Conflicts",
			ProviderMetadata: meta("When both sides changed, tern keeps both copies.", "guides/conflicts")},
	}
	first := "Run `tern sync --exclude` to skip files [1]. "
	steps := []func() error{
		func() error { return st.Start(wireMessageID, wireThreadID) },
		func() error { return st.Sources(srcs) },
		func() error { return st.Data("answer-status", "answer-status", json.RawMessage(wireStatus)) },
		func() error { return st.TextStart("txt_0") },
		func() error { return st.TextDelta("txt_0", first) },
		func() error {
			return st.Data("grounding", "g_0", grounding(0, utf16Len(first)-1, "src_1", true, nil))
		},
		func() error { return st.TextDelta("txt_0", wireText[len(first):]) },
		func() error {
			return st.Data("grounding", "g_1", grounding(utf16Len(first), utf16Len(wireText), "src_2", false, []string{"42"}))
		},
		func() error { return st.TextEnd("txt_0") },
		func() error {
			return st.Finish(wireThreadID, false, nil, aisdk.Member{Key: "answerStatus", Value: json.RawMessage(wireStatus)})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Errorf("wire server: %v", err)
			return
		}
	}
}

func grounding(start, end int, source string, supported bool, missing []string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"textId": "txt_0", "start": start, "end": end, "sources": []string{source}, "supported": supported, "missing": missing})
	return b
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
