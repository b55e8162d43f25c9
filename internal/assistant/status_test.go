package assistant_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// statusSink records the statuses an answer emits and its text.
type statusSink struct {
	assistant.Sink
	statuses []assistant.AnswerStatus
	finish   assistant.Finish
	text     strings.Builder
}

func (s *statusSink) Start(string, string) error             { return nil }
func (s *statusSink) Heartbeat() error                       { return nil }
func (s *statusSink) Sources([]assistant.Source) error       { return nil }
func (s *statusSink) BufferSources([]assistant.Source) error { return nil }
func (s *statusSink) Status(st assistant.AnswerStatus) error {
	s.statuses = append(s.statuses, st)
	return nil
}
func (s *statusSink) Finish(f assistant.Finish) error     { s.finish = f; return nil }
func (s *statusSink) Error(string) error                  { return nil }
func (s *statusSink) Grounding(assistant.Grounding) error { return nil }
func (s *statusSink) TextStart(string) error              { return nil }
func (s *statusSink) TextEnd(string) error                { return nil }
func (s *statusSink) Flush() error                        { return nil }
func (s *statusSink) BufferTextDelta(_ string, delta string) error {
	s.text.WriteString(delta)
	return nil
}
func (s *statusSink) Text(_ string, pieces ...string) error {
	for _, p := range pieces {
		s.text.WriteString(p)
	}
	return nil
}

// TestAnswerStatusEvents asks the extractive assistant of a fixture site
// questions it covers, covers in part, and does not cover: the status goes
// to the sink before the text and with the finish, the partial answer's
// text starts with its note, and the turn keeps status, note and names.
func TestAnswerStatusEvents(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	_, err := e.tenants.CreateProject(t.Context(), tenant.Project{ID: "pilot", OrgID: "acme", RepoURL: "testdata/offtopic"})
	must(t, err)
	d, err := e.tenants.CreateDomain(t.Context(), tenant.Domain{ID: "pilot", OrgID: "acme", ProjectID: "pilot", SiteURL: "https://pilot.example"})
	must(t, err)
	site, err := docs.Load(os.DirFS("testdata/offtopic"))
	must(t, err)
	if _, err := search.Build(t.Context(), e.index, d.ID, site, d.SiteURL); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		question string
		status   string
		note     string
		missing  []string
	}{
		{"Which platforms does Pilot run on?", assistant.StatusAnswered, "", nil},
		{"Does Pilot run on Linux, and does it run on FreeBSD?", assistant.StatusPartial, "The docs don't mention FreeBSD. Here is what they say about the rest of your question.", []string{"FreeBSD"}},
		{"Can Pilot export flights to Garmin?", assistant.StatusNotCovered, "The docs don't mention Garmin.", []string{"Garmin"}},
	}
	for _, tc := range tests {
		t.Run(tc.question, func(t *testing.T) {
			t.Parallel()
			req := ask(tc.question)
			must(t, req.Validate())
			a, err := e.svc.Begin(t.Context(), d, req)
			must(t, err)
			var sink statusSink
			must(t, a.Stream(t.Context(), &sink))
			want := assistant.AnswerStatus{Status: tc.status, Note: tc.note, Missing: tc.missing}
			if len(sink.statuses) != 1 || !sameStatus(sink.statuses[0], want) || !sameStatus(sink.finish.Status, want) {
				t.Fatalf("statuses %+v, finish %+v, want %+v", sink.statuses, sink.finish.Status, want)
			}
			if tc.note != "" && !strings.HasPrefix(sink.text.String(), tc.note) {
				t.Errorf("text does not start with the note:\n%s", sink.text.String())
			}
			turn := e.turns(a.Thread.ID)[0]
			if turn.Status != tc.status || turn.StatusNote != tc.note || !slices.Equal(turn.Missing, tc.missing) {
				t.Errorf("turn status %q note %q missing %q", turn.Status, turn.StatusNote, turn.Missing)
			}
		})
	}
}

func sameStatus(a, b assistant.AnswerStatus) bool {
	return a.Status == b.Status && a.Note == b.Note && slices.Equal(a.Missing, b.Missing)
}
