package app_test

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/answerstream"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/widget"
)

// The grounded answer the widget gets: a sentence its source holds, then a
// list item it does not (a sentence that starts on Markdown block syntax).
const (
	groundedFirst  = "Pass `--exclude` to `tern sync` to skip files [1].\n\n"
	groundedSecond = "- It retries **42 times** before it gives up [2]."
	groundedQuote  = "Pass `--exclude` to `tern sync`, or list the patterns in a `.ternignore` file at the root of the project."
)

// groundedStatus is the grounded answer's status.
var groundedStatus = assistant.AnswerStatus{Status: assistant.StatusPartial, Note: "The docs don't mention Datadog.", Missing: []string{"Datadog"}}

// groundedHost serves everything the browser needs from one origin: the
// docs page that embeds the widget, the widget, an assistant endpoint that
// streams the grounded answer in the v2 wire format, and the cited docs
// page, whose quoted passage sits far below its section heading so that the
// link's text fragment (not the anchor) must be what scrolls to it.
func groundedHost(t *testing.T) *httptest.Server {
	t.Helper()
	bundle := widget.Embedded()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("GET /widget.js", bundle.Latest)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /docs/guides/start", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = groundedHostPage.Execute(w, nil)
	})
	mux.HandleFunc("GET /docs/guides/sync", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(groundedDocsPage))
	})
	mux.HandleFunc("POST /discovery/v2/assistant/widget/message", func(w http.ResponseWriter, _ *http.Request) {
		writeGroundedAnswer(t, answerstream.New(aisdk.NewUIMessageStream(w)), srv.URL)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var groundedHostPage = template.Must(template.New("host").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Tern docs</title><link rel="icon" href="data:,"></head>
<body><h1>Getting started</h1><p>Install tern, then sync a folder.</p>
<script async src="/widget.js" data-domain="widget" data-key="svc_dsc_test" data-title="Tern docs" data-base-path="/docs"></script>
</body></html>`))

const groundedDocsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sync</title><link rel="icon" href="data:,">
<style>body { font: 16px/1.6 sans-serif; margin: 24px; max-width: 720px; } .filler { height: 2400px; color: #888; }</style></head>
<body><h1>Sync</h1>
<h2 id="exclude-files">Exclude files</h2>
<p class="filler">Everything about what sync copies, at length.</p>
<p id="passage">Pass <code>--exclude</code> to <code>tern sync</code>, or list the patterns in a <code>.ternignore</code> file at the root of the project.</p>
<p class="filler">More about sync.</p>
</body></html>`

func writeGroundedAnswer(t *testing.T, s assistant.Sink, base string) {
	srcs := []assistant.Source{
		{ID: "src_1", URL: base + "/docs/guides/sync#exclude-files", Title: "Sync › Exclude files", Path: "guides/sync", Quote: groundedQuote},
		{ID: "src_2", URL: base + "/docs/guides/retries", Title: "Retries", Path: "guides/retries", Quote: "A failed upload is tried again with a growing delay."},
	}
	first := utf16Len(groundedFirst)
	steps := []func() error{
		func() error { return s.Start("msg_grounded", "thr_grounded") },
		func() error { return s.Sources(srcs) },
		func() error { return s.TextStart("txt_0") },
		func() error { return s.BufferTextDelta("txt_0", groundedFirst) },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", End: utf16Len(strings.TrimSpace(groundedFirst)), Sources: []string{"src_1"}, Supported: true})
		},
		s.Flush,
		func() error { return s.BufferTextDelta("txt_0", groundedSecond) },
		func() error {
			return s.Grounding(assistant.Grounding{TextID: "txt_0", Start: first, End: first + utf16Len(groundedSecond), Sources: []string{"src_2"}, Missing: []string{"42"}})
		},
		func() error { return s.TextEnd("txt_0") },
		func() error { return s.Status(groundedStatus) },
		func() error { return s.Finish(assistant.Finish{ThreadID: "thr_grounded", Status: groundedStatus}) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Errorf("grounded answer: %v", err)
			return
		}
	}
}

// TestWidgetInBrowserShowsGrounding has the widget show an answer whose
// status is partial, with one sentence its cited docs do not hold: the
// status shows as a quiet line, the unsupported sentence is marked (and
// says so to assistive technology), a citation's quote shows on hover and
// on keyboard focus and on a first tap (a second one follows it), and its
// link opens the docs page scrolled to the quoted passage, highlighted by a
// text fragment. Screenshots in light
// and dark, desktop and phone.
func TestWidgetInBrowserShowsGrounding(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "widget-grounding")
	host := groundedHost(t)

	var run struct {
		Failure, Error string
		Console        []string
		Status         string
		Marks          []struct{ Text, Title, Parent string }
		ScreenReader   string
		ListItems      int
		Hover, Focus   struct {
			Visible               bool
			Text, Link, Described string
		}
		CiteHref string
		Opened   struct {
			URL                        string
			PassageTop, ViewportHeight float64
			HeadingTop, ScrollY        float64
		}
		FirstTap struct {
			Quote  string
			Opened int
		}
		SecondTap struct {
			URL    string
			Opened int
		}
		Screenshots []struct{ File, Scheme, Name, PanelBackground string }
	}
	browser.Run(t, "widget-grounding.mjs", map[string]any{
		"artifacts": artifacts,
		"page":      host.URL + "/docs/guides/start",
		"question":  "How do I skip files, and how often does it retry?",
	}, &run)
	if run.Failure != "" || run.Error != "" {
		t.Fatalf("browser: %s %s\nconsole: %q", run.Failure, run.Error, run.Console)
	}

	if !strings.Contains(run.Status, "Partly covered by the docs") || !strings.Contains(run.Status, "The docs don't mention Datadog.") {
		t.Errorf("status line %q", run.Status)
	}
	// A sentence that crosses inline elements is marked piece by piece.
	var marked strings.Builder
	for _, m := range run.Marks {
		marked.WriteString(m.Text)
		if m.Title != "Not found in the cited docs" || m.Parent != "LI" {
			t.Errorf("marked piece %+v: want it titled, inside the list item", m)
		}
	}
	if got := marked.String(); got != "It retries 42 times before it gives up 2." {
		t.Errorf("marked text %q, want the second sentence only", got)
	}
	if run.ListItems != 1 {
		t.Errorf("%d list items: marking the sentence broke its Markdown", run.ListItems)
	}
	if !strings.Contains(run.ScreenReader, "not found in the cited docs") {
		t.Errorf("no note for screen readers after the marked sentence: %q", run.ScreenReader)
	}
	for name, q := range map[string]struct {
		Visible               bool
		Text, Link, Described string
	}{"hover": run.Hover, "focus": run.Focus} {
		if !q.Visible || !strings.Contains(q.Text, "Pass --exclude to tern sync, or list the patterns") || q.Described == "" {
			t.Errorf("quote on %s: %+v", name, q)
		}
	}

	// The citation's link: the section URL with a text fragment, '-'
	// percent-encoded as the text fragment syntax wants.
	u, err := url.Parse(run.CiteHref)
	if err != nil || u.Path != "/docs/guides/sync" {
		t.Fatalf("citation link %q: %v", run.CiteHref, err)
	}
	if want := "exclude-files:~:text=Pass%20%2D%2Dexclude%20to%20tern,root%20of%20the%20project."; u.EscapedFragment() != want {
		t.Errorf("citation fragment %q, want %q", u.EscapedFragment(), want)
	}
	if run.Hover.Link != run.CiteHref {
		t.Errorf("the popover's link %q differs from the citation's %q", run.Hover.Link, run.CiteHref)
	}
	if !strings.Contains(run.FirstTap.Quote, "Pass --exclude to tern sync") || run.FirstTap.Opened != 0 {
		t.Errorf("a first tap on a citation: %+v, want its quote shown and no page opened", run.FirstTap)
	}
	if run.SecondTap.URL != run.CiteHref || run.SecondTap.Opened != 1 {
		t.Errorf("a second tap on it: %+v, want %q opened", run.SecondTap, run.CiteHref)
	}
	o := run.Opened
	if o.PassageTop < 0 || o.PassageTop > o.ViewportHeight || o.HeadingTop > -500 {
		t.Errorf("the opened page is not at the passage: %+v", o)
	}

	for _, sc := range run.Screenshots {
		if st, err := os.Stat(sc.File); err != nil || st.Size() < 10_000 {
			t.Errorf("screenshot %s: %v", sc.File, err)
		}
		if sc.PanelBackground != "" {
			if dark := sc.PanelBackground == "rgb(22, 25, 29)"; dark != (sc.Scheme == "dark") {
				t.Errorf("%s %s: panel background %s", sc.Name, sc.Scheme, sc.PanelBackground)
			}
		}
	}
	if len(run.Screenshots) != 5 {
		t.Errorf("%d screenshots, want 5", len(run.Screenshots))
	}
	t.Logf("screenshots: %d in %s", len(run.Screenshots), artifacts)
}
