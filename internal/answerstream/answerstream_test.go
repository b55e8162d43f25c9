package answerstream_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/answerstream"
	"github.com/docsmith/docsmith/internal/assistant"
)

// answer drives a sink through a model answer: sources (one with a quote
// and a path, one without), the text in two sentences each followed by its
// grounding, the status decided after the text, the finish with it.
func answer(s assistant.Sink) error {
	partial := assistant.AnswerStatus{Status: assistant.StatusPartial, Note: "The docs don't mention Datadog.", Missing: []string{"Datadog"}}
	steps := []func() error{
		func() error { return s.Start("msg_1", "thr_1") },
		func() error {
			return s.Sources([]assistant.Source{
				{ID: "src_1", URL: "https://docs.example.com/deploy#cli", Title: "Deploy › CLI", Path: "deploy", Quote: `Run "acme deploy" from the root.`},
				{ID: "src_2", URL: "https://docs.example.com/limits", Title: "Limits"},
			})
		},
		func() error { return s.TextStart("txt_0") },
		func() error { return s.BufferTextDelta("txt_0", "Run `acme deploy` [1]. ") },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", Start: 0, End: 22, Sources: []string{"src_1"}, Supported: true})
		},
		func() error { return s.BufferTextDelta("txt_0", "It sends logs to Datadog [2].") },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", Start: 23, End: 52, Sources: []string{"src_2"}, Missing: []string{"Datadog"}})
		},
		s.Flush,
		func() error { return s.TextEnd("txt_0") },
		func() error { return s.Status(partial) },
		func() error { return s.Finish(assistant.Finish{ThreadID: "thr_1", Status: partial}) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func TestEventsOnTheWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		new  func(http.ResponseWriter) aisdk.Stream
		want string
	}{
		{
			name: "v2 UI message stream",
			new:  func(w http.ResponseWriter) aisdk.Stream { return aisdk.NewUIMessageStream(w) },
			want: `data: {"type":"start","messageId":"msg_1","messageMetadata":{"threadId":"thr_1"}}

data: {"type":"start-step"}

data: {"type":"source-url","sourceId":"src_1","url":"https://docs.example.com/deploy#cli","title":"Deploy › CLI","providerMetadata":{"docsmith":{"quote":"Run \"acme deploy\" from the root.","path":"deploy"}}}

data: {"type":"source-url","sourceId":"src_2","url":"https://docs.example.com/limits","title":"Limits"}

data: {"type":"text-start","id":"txt_0"}

data: {"type":"text-delta","id":"txt_0","delta":"Run ` + "`acme deploy`" + ` [1]. "}

data: {"type":"data-grounding","id":"g_0","data":{"textId":"txt_0","start":0,"end":22,"sources":["src_1"],"supported":true}}

data: {"type":"text-delta","id":"txt_0","delta":"It sends logs to Datadog [2]."}

data: {"type":"data-grounding","id":"g_1","data":{"textId":"txt_0","start":23,"end":52,"sources":["src_2"],"supported":false,"missing":["Datadog"]}}

data: {"type":"text-end","id":"txt_0"}

data: {"type":"data-answer-status","id":"answer-status","data":{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}}

data: {"type":"finish-step"}

data: {"type":"finish","messageMetadata":{"threadId":"thr_1","answerStatus":{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}}}

data: [DONE]

`,
		},
		{
			name: "v1 data stream",
			new:  func(w http.ResponseWriter) aisdk.Stream { return aisdk.NewDataStream(w) },
			want: `f:{"messageId":"msg_1"}
8:[{"threadId":"thr_1"}]
h:{"sourceType":"url","id":"src_1","url":"https://docs.example.com/deploy#cli","title":"Deploy › CLI","providerMetadata":{"docsmith":{"quote":"Run \"acme deploy\" from the root.","path":"deploy"}}}
h:{"sourceType":"url","id":"src_2","url":"https://docs.example.com/limits","title":"Limits"}
0:"Run ` + "`acme deploy`" + ` [1]. "
8:[{"grounding":{"textId":"txt_0","start":0,"end":22,"sources":["src_1"],"supported":true}}]
0:"It sends logs to Datadog [2]."
8:[{"grounding":{"textId":"txt_0","start":23,"end":52,"sources":["src_2"],"supported":false,"missing":["Datadog"]}}]
8:[{"answerStatus":{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}}]
e:{"finishReason":"stop","isContinued":false}
d:{"finishReason":"stop","threadId":"thr_1","answerStatus":{"status":"partial","note":"The docs don't mention Datadog.","missing":["Datadog"]}}
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			if err := answer(answerstream.New(tc.new(rec))); err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestAnsweredWithoutStatusDetails: an answered status has no note or
// missing names on the wire, and a finish without a decided status carries
// none.
func TestAnsweredWithoutStatusDetails(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	s := answerstream.New(aisdk.NewUIMessageStream(rec))
	for _, err := range []error{
		s.Start("", ""),
		s.Status(assistant.AnswerStatus{Status: assistant.StatusAnswered}),
		s.Text("txt_0", "Yes."),
		s.Finish(assistant.Finish{ThreadID: "thr_1"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	body := rec.Body.String()
	if !strings.Contains(body, `{"type":"data-answer-status","id":"answer-status","data":{"status":"answered"}}`) {
		t.Errorf("no bare answered status:\n%s", body)
	}
	if !strings.Contains(body, `{"type":"finish","messageMetadata":{"threadId":"thr_1"}}`) {
		t.Errorf("the finish carries a status it was not given:\n%s", body)
	}
}

// TestClosedIsTheAssistants: a write after the end is assistant.ErrClosed.
func TestClosedIsTheAssistants(t *testing.T) {
	t.Parallel()
	s := answerstream.New(aisdk.NewDataStream(httptest.NewRecorder()))
	if err := s.Finish(assistant.Finish{}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"status":    s.Status(assistant.AnswerStatus{Status: assistant.StatusNotCovered}),
		"grounding": s.Grounding(assistant.Grounding{TextID: "txt_0", End: 1}),
		"text":      s.Text("txt_1", "x"),
	} {
		if !errors.Is(err, assistant.ErrClosed) {
			t.Errorf("%s after finish: %v, want assistant.ErrClosed", name, err)
		}
	}
}
