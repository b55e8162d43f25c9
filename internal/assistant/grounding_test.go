package assistant_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// recorder is a Sink that keeps an answer's events.
type recorder struct {
	mu         sync.Mutex
	events     []string
	sources    []assistant.Source
	text       strings.Builder
	groundings []assistant.Grounding
	statuses   []assistant.AnswerStatus
	finish     assistant.Finish
	errorText  string
}

var _ assistant.Sink = (*recorder)(nil)

func (r *recorder) event(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, name)
}

func (r *recorder) Start(string, string) error { r.event("start"); return nil }
func (r *recorder) Heartbeat() error           { return nil }
func (r *recorder) Sources(s []assistant.Source) error {
	r.event("sources")
	r.sources = s
	return nil
}

func (r *recorder) BufferSources(s []assistant.Source) error { return r.Sources(s) }
func (r *recorder) Status(s assistant.AnswerStatus) error {
	r.event("status")
	r.statuses = append(r.statuses, s)
	return nil
}

func (r *recorder) Text(id string, pieces ...string) error {
	r.event("text")
	for _, p := range pieces {
		r.text.WriteString(p)
	}
	return nil
}
func (r *recorder) TextStart(string) error { r.event("text-start"); return nil }
func (r *recorder) BufferTextDelta(_, delta string) error {
	r.event("text-delta")
	r.text.WriteString(delta)
	return nil
}
func (r *recorder) Flush() error         { return nil }
func (r *recorder) TextEnd(string) error { r.event("text-end"); return nil }
func (r *recorder) Grounding(g assistant.Grounding) error {
	r.event("grounding")
	r.groundings = append(r.groundings, g)
	return nil
}

func (r *recorder) Finish(f assistant.Finish) error {
	r.event("finish")
	r.finish = f
	return nil
}

func (r *recorder) Error(message string) error {
	r.event("error")
	r.errorText = message
	return nil
}

// span is the text a grounding covers, indexed as JavaScript indexes it.
func (r *recorder) span(g assistant.Grounding) string {
	u := utf16.Encode([]rune(r.text.String()))
	if g.Start < 0 || g.End > len(u) || g.Start > g.End {
		return "<out of range>"
	}
	return string(utf16.Decode(u[g.Start:g.End]))
}

// modelServer is a local server speaking a model provider's protocol.
type modelServer struct {
	name  string
	start func(t *testing.T, turns ...llmtest.Turn) func(string) (llm.Model, error)
}

var modelServers = []modelServer{
	{"a local server speaking the OpenAI protocol", func(t *testing.T, turns ...llmtest.Turn) func(string) (llm.Model, error) {
		return openModel(llmtest.NewOpenAIServer(t, turns...).URL)
	}},
	{"a local server speaking the Anthropic protocol", func(t *testing.T, turns ...llmtest.Turn) func(string) (llm.Model, error) {
		srv := llmtest.NewAnthropicServer(t, turns...)
		return func(name string) (llm.Model, error) {
			return llm.Open(name, llm.Config{AnthropicBaseURL: srv.URL, AnthropicAPIKey: "test-key", MaxRetries: -1})
		}
	}},
}

// groundedAnswer asks the fixture site's sync question of a model that
// answers with chunks, on a domain with the given grounding setting.
func groundedAnswer(t *testing.T, ms modelServer, grounding string, chunks ...string) (*env, *recorder, assistant.Turn, *prometheus.Registry) {
	t.Helper()
	return groundedAnswerTo(t, ms, grounding, "How do I exclude files from a sync?", chunks...)
}

// groundedAnswerTo is groundedAnswer to another question about syncs.
func groundedAnswerTo(t *testing.T, ms modelServer, grounding, question string, chunks ...string) (*env, *recorder, assistant.Turn, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	open := ms.start(t, llmtest.Text(chunks...))
	e := setup(t, func(c *assistant.Config) { c.OpenModel = open; c.Registerer = reg })
	model := "openai/test-model"
	if strings.Contains(ms.name, "Anthropic") {
		model = "anthropic/test-model"
	}
	d := e.domain
	d.Model = model
	d.Settings.Grounding = grounding
	must(t, e.store.UpdateDomain(t.Context(), d))
	req := ask(question)
	must(t, req.Validate())
	a, err := e.svc.Begin(t.Context(), d, req)
	must(t, err)
	rec := &recorder{}
	must(t, a.Stream(t.Context(), rec))
	if rec.errorText != "" {
		t.Fatalf("answer failed: %s", rec.errorText)
	}
	if len(rec.sources) == 0 || !strings.HasPrefix(rec.sources[0].URL, siteURL+"/guides/sync") {
		t.Fatalf("the first passage is not the one the scripted answers cite: %+v", rec.sources)
	}
	return e, rec, e.turns(a.Thread.ID)[0], reg
}

// The scripted answer: a supported sentence, one that names a file the
// passage does not, and one that cites a passage the model was not given.
var mixedAnswer = []string{
	"Put glob patterns in a `.ternignore` file at the root of the folder [1]. ",
	"Tern also reads `.gitignore` files [1]. Lines that start with `#` are ",
	"comments [1][9].",
}

func TestGroundingMarksUnsupportedSentences(t *testing.T) {
	t.Parallel()
	for _, ms := range modelServers {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			_, rec, turn, reg := groundedAnswer(t, ms, "", mixedAnswer...)
			wantText := "Put glob patterns in a `.ternignore` file at the root of the folder [1]. " +
				"Tern also reads `.gitignore` files [1]. Lines that start with `#` are comments [1]."
			if rec.text.String() != wantText {
				t.Fatalf("text = %q\nwant %q", rec.text.String(), wantText)
			}
			want := []struct {
				span      string
				supported bool
				missing   []string
			}{
				{"Put glob patterns in a `.ternignore` file at the root of the folder [1].", true, nil},
				{"Tern also reads `.gitignore` files [1].", false, []string{".gitignore"}},
				{"Lines that start with `#` are comments [1].", true, nil},
			}
			if len(rec.groundings) != len(want) {
				t.Fatalf("groundings = %+v", rec.groundings)
			}
			for i, w := range want {
				g := rec.groundings[i]
				if rec.span(g) != w.span || g.Supported != w.supported || !slices.Equal(g.Missing, w.missing) ||
					g.TextID != "txt_0" || !slices.Equal(g.Sources, []string{"src_1"}) {
					t.Errorf("grounding %d = %+v (%q); want %q supported %v missing %q", i, g, rec.span(g), w.span, w.supported, w.missing)
				}
			}
			// Each grounding follows the text it checks.
			if first := slices.Index(rec.events, "grounding"); first < slices.Index(rec.events, "text-delta") {
				t.Errorf("a grounding came before the text: %v", rec.events)
			}
			if got := rec.finish.Status; got.Status != assistant.StatusAnswered {
				t.Errorf("status = %+v", got)
			}
			if turn.Status != assistant.TurnAnswered || turn.Answer != wantText {
				t.Errorf("turn = %q %q", turn.Status, turn.Answer)
			}
			c := counters(t, reg)
			if c[`docsmith_assistant_citations_dropped_total{domain="tern"}`] != 1 ||
				c[`docsmith_assistant_grounded_sentences_total{domain="tern",result="unsupported"}`] != 1 ||
				c[`docsmith_assistant_grounded_sentences_total{domain="tern",result="supported"}`] != 2 {
				t.Errorf("metrics = %v", c)
			}
			for _, s := range rec.sources {
				if s.Quote == "" || strings.ContainsAny(s.Quote, "`*[") || len(s.Quote) > 200 {
					t.Errorf("source %s quote %q: want plain text of 200 bytes at most", s.ID, s.Quote)
				}
			}
			if q := rec.sources[0].Quote; !strings.Contains(q, ".ternignore") {
				t.Errorf("the excluding passage quotes %q", q)
			}
		})
	}
}

func TestStrictGroundingLeavesOutUnsupportedSentences(t *testing.T) {
	t.Parallel()
	for _, ms := range modelServers {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			_, rec, turn, reg := groundedAnswer(t, ms, tenant.GroundingStrict, mixedAnswer...)
			wantText := "Put glob patterns in a `.ternignore` file at the root of the folder [1]. " +
				"Lines that start with `#` are comments [1]."
			if rec.text.String() != wantText || turn.Answer != wantText {
				t.Fatalf("text = %q, stored %q\nwant %q", rec.text.String(), turn.Answer, wantText)
			}
			if len(rec.groundings) != 2 || !rec.groundings[0].Supported || !rec.groundings[1].Supported ||
				rec.span(rec.groundings[1]) != "Lines that start with `#` are comments [1]." {
				t.Errorf("groundings = %+v", rec.groundings)
			}
			if c := counters(t, reg); c[`docsmith_assistant_grounded_sentences_total{domain="tern",result="left_out"}`] != 1 {
				t.Errorf("metrics = %v", c)
			}
			if rec.finish.Status.Status != assistant.StatusAnswered {
				t.Errorf("status = %+v", rec.finish.Status)
			}
		})
	}
}

func TestStrictGroundingWithNothingBacked(t *testing.T) {
	t.Parallel()
	for _, ms := range modelServers {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			_, rec, turn, _ := groundedAnswer(t, ms, tenant.GroundingStrict, "Tern also reads `.gitignore` files [1].")
			if !strings.HasPrefix(rec.text.String(), "The documentation passages I found do not back an answer") || len(rec.groundings) != 0 {
				t.Fatalf("text = %q, groundings %+v", rec.text.String(), rec.groundings)
			}
			if rec.finish.Status.Status != assistant.StatusNotCovered || turn.Status != assistant.TurnNotCovered {
				t.Errorf("status = %+v, turn %q", rec.finish.Status, turn.Status)
			}
		})
	}
}

func TestModelThatDeclinesIsNotCovered(t *testing.T) {
	t.Parallel()
	for _, ms := range modelServers {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			_, rec, turn, _ := groundedAnswer(t, ms, "", "The documentation ", "does not cover this.")
			if rec.text.String() != "The documentation does not cover this." || len(rec.groundings) != 0 {
				t.Fatalf("text = %q, groundings %+v", rec.text.String(), rec.groundings)
			}
			st := rec.finish.Status
			if st.Status != assistant.StatusNotCovered || st.Note != "The documentation does not cover this." || turn.Status != assistant.TurnNotCovered {
				t.Errorf("status = %+v, turn %q", st, turn.Status)
			}
			if len(rec.statuses) == 0 || rec.statuses[len(rec.statuses)-1].Status != assistant.StatusNotCovered {
				t.Errorf("status events = %+v", rec.statuses)
			}
		})
	}
}

func TestModelThatDeclinesPartIsPartial(t *testing.T) {
	t.Parallel()
	for _, ms := range modelServers {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			_, rec, turn, _ := groundedAnswer(t, ms, tenant.GroundingStrict,
				"Put glob patterns in a `.ternignore` file [1]. ", "The documentation doesn't cover excluding files by size.")
			if want := "Put glob patterns in a `.ternignore` file [1]. The documentation doesn't cover excluding files by size."; rec.text.String() != want {
				t.Fatalf("text = %q, want %q", rec.text.String(), want)
			}
			st := rec.finish.Status
			if st.Status != assistant.StatusPartial || st.Note != "The documentation doesn't cover excluding files by size." ||
				turn.Status != assistant.TurnPartial {
				t.Errorf("status = %+v, turn %q", st, turn.Status)
			}
			if len(rec.groundings) != 1 || !rec.groundings[0].Supported {
				t.Errorf("groundings = %+v", rec.groundings)
			}
		})
	}
}

func TestModelAnswerNamesWhatTheDocsLack(t *testing.T) {
	t.Parallel()
	const answer = "Put glob patterns in a `.ternignore` file at the root of the folder [1]."
	for _, ms := range modelServers {
		for _, tc := range []struct {
			name, question, status, note string
			missing                      []string
		}{
			{"a name beside a covered part", "How do I exclude files from a sync, and does it work with Dropbox?",
				assistant.StatusPartial, "The docs don't mention Dropbox.", []string{"Dropbox"}},
			{"a name and nothing else", "Can a sync exclude files on Dropbox?",
				assistant.StatusNotCovered, "The docs don't mention Dropbox.", []string{"Dropbox"}},
			{"every name known", "How do I exclude files from a Tern sync?", assistant.StatusAnswered, "", nil},
		} {
			t.Run(ms.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				// groundedAnswerTo checks that the model was given the
				// passages even when the answer is not covered.
				_, rec, turn, _ := groundedAnswerTo(t, ms, "", tc.question, answer)
				if rec.text.String() != answer {
					t.Fatalf("text = %q, want the model's answer unchanged", rec.text.String())
				}
				st := rec.finish.Status
				if st.Status != tc.status || st.Note != tc.note || !slices.Equal(st.Missing, tc.missing) {
					t.Errorf("status = %+v, want %s %q %q", st, tc.status, tc.note, tc.missing)
				}
				if turn.Status != tc.status || !slices.Equal(turn.Missing, tc.missing) {
					t.Errorf("turn status %q missing %q", turn.Status, turn.Missing)
				}
				if len(rec.statuses) != 1 || rec.statuses[0].Status != tc.status {
					t.Errorf("status events = %+v", rec.statuses)
				}
			})
		}
	}
}
