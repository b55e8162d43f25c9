package assistant_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/answerstream"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

const siteURL = "https://tern.example/docs"

// env is one test's world: a real SQLite store with two organizations, a
// domain in each over the fixture site, indexed.
type env struct {
	t       testing.TB
	store   *sqlite.Store
	index   *search.Memory // the store's search index, in memory as the server holds it
	tenants *tenant.Service
	svc     *assistant.Service
	domain  tenant.Domain // org acme, indexed
	sibling tenant.Domain // org acme, another domain over the same docs
	foreign tenant.Domain // org globex
}

func setup(t testing.TB, configure func(*assistant.Config)) *env {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	e := &env{t: t, store: store, index: search.NewMemory(store, search.MemoryConfig{}), tenants: tenant.NewService(store, now)}
	for _, org := range []string{"acme", "globex"} {
		_, err := e.tenants.CreateOrg(ctx, org)
		must(t, err)
		_, err = e.tenants.CreateProject(ctx, tenant.Project{ID: org + "-docs", OrgID: org, RepoURL: "testdata/site"})
		must(t, err)
	}
	e.domain = e.newDomain(tenant.Domain{ID: "tern", OrgID: "acme", ProjectID: "acme-docs", SiteURL: siteURL, FinishThreadID: true})
	e.sibling = e.newDomain(tenant.Domain{ID: "tern-beta", OrgID: "acme", ProjectID: "acme-docs", SiteURL: siteURL})
	e.foreign = e.newDomain(tenant.Domain{ID: "globex", OrgID: "globex", ProjectID: "globex-docs", SiteURL: siteURL})
	cfg := assistant.Config{Index: e.index, Threads: store, Now: now, Heartbeat: time.Hour}
	if configure != nil {
		configure(&cfg)
	}
	e.svc = assistant.New(cfg)
	return e
}

func (e *env) newDomain(d tenant.Domain) tenant.Domain {
	e.t.Helper()
	d, err := e.tenants.CreateDomain(e.t.Context(), d)
	must(e.t, err)
	site, err := docs.Load(os.DirFS("testdata/site"))
	must(e.t, err)
	if _, err := search.Build(e.t.Context(), e.index, d.ID, site, d.SiteURL); err != nil {
		e.t.Fatal(err)
	}
	return d
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// uiSink writes an answer's events on w as the v2 endpoint does.
func uiSink(w http.ResponseWriter) assistant.Sink {
	return answerstream.New(aisdk.NewUIMessageStream(w))
}

// userMessage is a v2 chat message.
func userMessage(text string) assistant.Message {
	return assistant.Message{Role: "user", Text: text}
}

func ask(text string) assistant.Request {
	return assistant.Request{FP: "anonymous", Messages: []assistant.Message{userMessage(text)}, PageSize: 5}
}

// answer runs one request through Begin and Stream on a UI message stream
// and returns what the client received.
func (e *env) answer(ctx context.Context, d tenant.Domain, req assistant.Request) (*assistant.Answer, reply) {
	e.t.Helper()
	if err := req.Validate(); err != nil {
		e.t.Fatalf("validate: %v", err)
	}
	a, err := e.svc.Begin(ctx, d, req)
	if err != nil {
		e.t.Fatalf("begin: %v", err)
	}
	w := httptest.NewRecorder()
	if err := a.Stream(ctx, uiSink(w)); err != nil {
		e.t.Fatalf("stream: %v", err)
	}
	return a, parseUIStream(e.t, w.Body.String())
}

// reply is a UI message stream as a client assembles it.
type reply struct {
	raw        string
	chunks     []map[string]any
	threadID   string // from start's messageMetadata
	finishID   string // the top-level threadId of finish
	sources    []assistant.Source
	text       string
	errorText  string
	heartbeats int
	finished   bool
}

func parseUIStream(t testing.TB, raw string) reply {
	t.Helper()
	r := reply{raw: raw}
	for _, event := range strings.Split(raw, "\n\n") {
		switch {
		case event == "":
			continue
		case event == ": ping":
			r.heartbeats++
			continue
		case event == "data: [DONE]":
			continue
		}
		data, ok := strings.CutPrefix(event, "data: ")
		if !ok {
			t.Fatalf("unexpected event %q in\n%s", event, raw)
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		r.chunks = append(r.chunks, c)
		switch c["type"] {
		case "start":
			if md, ok := c["messageMetadata"].(map[string]any); ok {
				r.threadID, _ = md["threadId"].(string)
			}
		case "source-url":
			title, _ := c["title"].(string)
			r.sources = append(r.sources, assistant.Source{ID: c["sourceId"].(string), URL: c["url"].(string), Title: title})
		case "text-delta":
			r.text += c["delta"].(string)
		case "error":
			r.errorText = c["errorText"].(string)
		case "finish":
			r.finished = true
			r.finishID, _ = c["threadId"].(string)
		}
	}
	return r
}

// types lists the chunk types in order.
func (r reply) types() []string {
	var out []string
	for _, c := range r.chunks {
		out = append(out, c["type"].(string))
	}
	return out
}

// openModel opens models on an llmtest server.
func openModel(baseURL string) func(string) (llm.Model, error) {
	return func(name string) (llm.Model, error) {
		return llm.Open(name, llm.Config{OpenAIBaseURL: baseURL, OpenAIAPIKey: "test-key", MaxRetries: -1})
	}
}
