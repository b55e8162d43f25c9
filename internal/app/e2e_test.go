package app_test

// End-to-end tests of the agent-job API through the real server: app.Main
// with its SQLite store, workers and HTTP server on a random port, set up
// through the real CLI. Every response a test receives is validated against
// docs/api-reference/openapi.json by the client's transport, so the document
// and the server cannot drift apart unnoticed.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/httpapi"
)

// ---------------------------------------------------------------------------
// The test runner: the agent, reduced to what the API tests need.

const (
	testPRLink   = "https://forge.example/acme/docs/pull/7"
	testPRNumber = 7
	testRepo     = "https://git.example/acme/docs.git"
	failMessage  = "the test runner was told to fail"
)

// testRunner decides by the words of the prompt: "block" runs until its
// context ends, "fail" fails, "pr" changes a file and opens a pull request,
// anything else finishes without a change.
type testRunner struct{}

func (testRunner) RunTurn(ctx context.Context, t agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
	words := strings.Fields(strings.ToLower(t.Message.Prompt))
	switch {
	case slices.Contains(words, "block"):
		<-ctx.Done()
		return agentjob.TurnOutcome{}, context.Cause(ctx)
	case slices.Contains(words, "fail"):
		return agentjob.TurnOutcome{}, errors.New(failMessage)
	case slices.Contains(words, "pr"):
		return agentjob.TurnOutcome{
			Summary:      "Documented the change in guides/setup.mdx.",
			PRLink:       testPRLink,
			PRNumber:     testPRNumber,
			FilesChanged: []string{"guides/setup.mdx"},
		}, nil
	}
	return agentjob.TurnOutcome{Summary: "Nothing needed to change: the docs already say this."}, nil
}

// ---------------------------------------------------------------------------
// The OpenAPI document and the validating transport.

type spec struct {
	doc    *openapi3.T
	router routers.Router
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	openapi3.DefineStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.Parse(s)
		if err != nil || !u.IsAbs() || u.Host == "" {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
		return nil
	}))
	// A page's Markdown is text, checked as text/plain is.
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIDocument())
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	// Match paths on any host: the tests' servers listen on random ports.
	doc.Servers = nil
	// A page's path holds slashes: route its parameter over them, as
	// routes.go's {path...} does (OpenAPI has no such parameter).
	for path, item := range doc.Paths.Map() {
		if wide, ok := strings.CutSuffix(path, "/{path}"); ok {
			doc.Paths.Delete(path)
			doc.Paths.Set(wide+"/{path:.+}", item)
		}
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi.json: %w", err)
	}
	return &spec{doc: doc, router: router}, nil
})

func mustSpec(t testing.TB) *spec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// check validates one response against the document: its status must be
// declared for the operation, its declared headers present and well formed,
// and its body must match the schema (except an event stream's, which is
// read by the test). A request the document does not route must have been
// answered by the JSON 404/405 fallbacks.
func (s *spec) check(req *http.Request, resp *http.Response) error {
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return s.checkFallback(err, resp)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	stream := mediaType == "text/event-stream"
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: stream},
	}
	if stream {
		ref := route.Operation.Responses.Status(resp.StatusCode)
		if ref == nil || ref.Value.Content.Get(resp.Header.Get("Content-Type")) == nil {
			return fmt.Errorf("status %d with Content-Type %q is not declared", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return openapi3filter.ValidateResponse(context.Background(), input)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("%w\nbody: %s", err, truncate(body))
	}
	return nil
}

func (s *spec) checkFallback(routeErr error, resp *http.Response) error {
	switch {
	case errors.Is(routeErr, routers.ErrMethodNotAllowed) || strings.Contains(routeErr.Error(), routers.ErrMethodNotAllowed.Error()):
		if resp.StatusCode != http.StatusMethodNotAllowed {
			return fmt.Errorf("method not in the document, but the status is %d, not 405", resp.StatusCode)
		}
		if resp.Header.Get("Allow") == "" {
			return errors.New("405 without an Allow header")
		}
	case errors.Is(routeErr, routers.ErrPathNotFound) || strings.Contains(routeErr.Error(), routers.ErrPathNotFound.Error()):
		if resp.StatusCode != http.StatusNotFound {
			return fmt.Errorf("path not in the document, but the status is %d, not 404", resp.StatusCode)
		}
	default:
		return fmt.Errorf("find route: %w", routeErr)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("error with Content-Type %q, not JSON", resp.Header.Get("Content-Type"))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if err := s.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		return fmt.Errorf("error body does not match the Error schema: %w", err)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// validatingTransport checks every response against openapi.json, so no
// test can forget to.
type validatingTransport struct {
	t    testing.TB
	spec *spec
	next http.RoundTripper
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := v.spec.check(req, resp); err != nil {
		v.t.Errorf("%s %s -> %d does not match openapi.json: %v", req.Method, req.URL.RequestURI(), resp.StatusCode, err)
	}
	return resp, nil
}

// ---------------------------------------------------------------------------
// The server under test.

const (
	orgA = "acme"
	orgB = "globex"
	// projA and projA2 belong to orgA, projB to orgB.
	projA  = "acme-docs"
	projA2 = "acme-api"
	projB  = "globex-docs"
)

type server struct {
	t      *testing.T
	dir    string
	env    map[string]string
	main   *app.Main
	base   string
	client *http.Client
	logs   *lockedBuffer

	adminA, adminB, assistantA string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setup creates two organizations through the CLI (acme with two projects,
// an admin and an assistant key; globex with one project and an admin key)
// and starts a server on a fresh data directory. env overrides options as
// "DOCSMITH_NAME=value".
func setup(t *testing.T, env ...string) *server {
	t.Helper()
	s := &server{
		t:    t,
		dir:  t.TempDir(),
		logs: &lockedBuffer{},
	}
	s.env = map[string]string{
		"DOCSMITH_DATA_DIR":         s.dir,
		"DOCSMITH_ADDR":             "127.0.0.1:0",
		"DOCSMITH_DEMO":             "false",
		"DOCSMITH_WORKERS":          "2",
		"DOCSMITH_TURN_LEASE":       "3s",
		"DOCSMITH_QUEUE_POLL":       "50ms",
		"DOCSMITH_TURN_TIMEOUT":     "1m",
		"DOCSMITH_SHUTDOWN_TIMEOUT": "5s",
		"DOCSMITH_LOG_LEVEL":        "debug",
		// Every request of a test comes from 127.0.0.1, often faster than
		// a reader asks: the short per-IP windows would refuse a test's
		// own set-up. A test of those limits names them in env.
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST":  "0",
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE": "0",
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("setup: %q is not NAME=value", kv)
		}
		s.env[k] = v
	}

	s.cli("org", "create", orgA)
	s.cli("org", "create", orgB)
	s.cli("project", "create", "--org", orgA, "--id", projA, "--repo", testRepo)
	s.cli("project", "create", "--org", orgA, "--id", projA2, "--repo", "https://git.example/acme/api-docs.git", "--ref", "develop")
	s.cli("project", "create", "--org", orgB, "--id", projB, "--repo", "https://git.example/globex/docs.git")
	s.adminA = s.newKey(orgA, "admin")
	s.adminB = s.newKey(orgB, "admin")
	s.assistantA = s.newKey(orgA, "assistant")

	transport := http.DefaultTransport.(*http.Transport).Clone()
	s.client = &http.Client{Transport: &validatingTransport{t: t, spec: mustSpec(t), next: transport}}
	t.Cleanup(func() {
		if s.main != nil {
			if err := s.main.Shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		}
		transport.CloseIdleConnections()
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	s.start()
	return s
}

func (s *server) lookupEnv(name string) (string, bool) {
	v, ok := s.env[name]
	return v, ok
}

// cli runs a docsmith command on the server's data directory and returns
// its standard output.
func (s *server) cli(args ...string) string {
	s.t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--data", s.dir)
	code := cli.Run(s.t.Context(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: s.lookupEnv})
	if code != 0 {
		s.t.Fatalf("docsmith %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// newKey creates a key through the CLI, which prints only the secret.
func (s *server) newKey(org, kind string) string {
	s.t.Helper()
	out := s.cli("key", "create", "--org", org, "--kind", kind, "--name", "e2e "+kind)
	secret := strings.TrimSuffix(out, "\n")
	if strings.ContainsAny(secret, " \n\t") {
		s.t.Fatalf("key create printed more than the secret: %q", out)
	}
	want := "svc_"
	if kind == "assistant" {
		want = "svc_dsc_"
	}
	if !strings.HasPrefix(secret, want) {
		s.t.Fatalf("%s key %q does not start with %s", kind, secret, want)
	}
	return secret
}

func (s *server) start() {
	s.t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	loader := config.Bind(fs, true)
	if err := fs.Parse(nil); err != nil {
		s.t.Fatal(err)
	}
	cfg, err := loader.Load(s.lookupEnv)
	if err != nil {
		s.t.Fatalf("load config: %v", err)
	}
	m := &app.Main{Config: cfg, Log: cfg.Logger(s.logs), Runner: testRunner{}, Version: "v1.2.3-test", Commit: "0123abc"}
	if err := m.Start(s.t.Context()); err != nil {
		s.t.Fatalf("start: %v", err)
	}
	s.main = m
	s.base = "http://" + m.Addr()
}

// restart stops the server and starts a new process on the same data.
func (s *server) restart() {
	s.t.Helper()
	m := s.main
	s.main = nil
	if err := m.Shutdown(s.t.Context()); err != nil {
		s.t.Fatalf("shutdown: %v", err)
	}
	s.start()
}

// ---------------------------------------------------------------------------
// Requests.

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, truncate(r.body)) }

// errorMessage is the error body's message; it fails the test if the body is
// not the one error shape.
func (r reply) errorMessage(t *testing.T) string {
	t.Helper()
	var e struct {
		Error *string `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == nil || *e.Error == "" {
		t.Fatalf("error body is not {\"error\": \"...\"}: %s", r)
	}
	return *e.Error
}

type request struct {
	method string
	path   string
	key    string // bearer key; empty sends no Authorization
	body   string // sent as is when not empty
	json   any    // encoded when not nil
	header map[string]string
}

func (s *server) do(q request) reply {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	var body io.Reader
	contentType := ""
	switch {
	case q.json != nil:
		b, err := json.Marshal(q.json)
		if err != nil {
			s.t.Fatal(err)
		}
		body, contentType = bytes.NewReader(b), "application/json"
	case q.body != "":
		body, contentType = strings.NewReader(q.body), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, q.method, s.base+q.path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if q.key != "" {
		req.Header.Set("Authorization", "Bearer "+q.key)
	}
	for k, v := range q.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: read body: %v", q.method, q.path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (s *server) get(path, key string) reply {
	s.t.Helper()
	return s.do(request{method: http.MethodGet, path: path, key: key})
}

func (s *server) post(path, key string, v any, header ...string) reply {
	s.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return s.do(request{method: http.MethodPost, path: path, key: key, json: v, header: h})
}

func prompt(p string) map[string]any { return map[string]any{"prompt": p} }

func jobsPath(project string) string          { return "/v2/agent/" + project + "/job" }
func jobPath(project, id string) string       { return "/v2/agent/" + project + "/job/" + id }
func listPath(project, query string) string   { return "/v2/agent/" + project + "/jobs" + query }
func actionPath(project, id, a string) string { return "/v2/agent/" + project + "/job/" + id + "/" + a }

// ---------------------------------------------------------------------------
// The job as a client reads it.

type jobView struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Source struct {
		Repository string `json:"repository"`
		Ref        string `json:"ref"`
	} `json:"source"`
	Model        string        `json:"model"`
	PRLink       *string       `json:"prLink"`
	CreatedAt    string        `json:"createdAt"`
	ArchivedAt   *string       `json:"archivedAt"`
	ProjectID    string        `json:"projectId"`
	BaseRef      string        `json:"baseRef"`
	UpdatedAt    string        `json:"updatedAt"`
	CompletedAt  *string       `json:"completedAt"`
	Summary      *string       `json:"summary"`
	Error        *string       `json:"error"`
	FilesChanged []string      `json:"filesChanged"`
	PRNumber     *int          `json:"prNumber"`
	Messages     []messageView `json:"messages"`
}

type messageView struct {
	Seq        int     `json:"seq"`
	Prompt     string  `json:"prompt"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	Summary    *string `json:"summary"`
	Error      *string `json:"error"`
	CreatedAt  string  `json:"createdAt"`
	StartedAt  *string `json:"startedAt"`
	FinishedAt *string `json:"finishedAt"`
}

type listView struct {
	Jobs       []jobView `json:"jobs"`
	NextCursor *string   `json:"nextCursor"`
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T: %v\nbody: %s", v, err, r)
	}
	return v
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func expectStatus(t *testing.T, r reply, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r)
	}
}

// expectError checks an error answer's status and that its message contains
// every fragment.
func expectError(t *testing.T, what string, r reply, status int, fragments ...string) string {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r)
		return ""
	}
	msg := r.errorMessage(t)
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("%s: message %q does not contain %q", what, msg, f)
		}
	}
	return msg
}

func (s *server) createJob(key, project, p string) jobView {
	s.t.Helper()
	r := s.post(jobsPath(project), key, prompt(p))
	expectStatus(s.t, r, http.StatusCreated)
	return decode[jobView](s.t, r)
}

func (s *server) getJob(key, project, id string) jobView {
	s.t.Helper()
	r := s.get(jobPath(project, id), key)
	expectStatus(s.t, r, http.StatusOK)
	return decode[jobView](s.t, r)
}

// waitJob polls the job until done says so, or fails the test after a
// deadline.
func (s *server) waitJob(key, project, id, what string, done func(jobView) bool) jobView {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j := s.getJob(key, project, id)
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("job %s: timed out waiting until %s; last state: %+v", id, what, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) waitSettled(key, project, id string) jobView {
	s.t.Helper()
	return s.waitJob(key, project, id, "it is not active", func(j jobView) bool { return j.Status != "active" })
}

func (s *server) waitRunning(key, project, id string, seq int) jobView {
	s.t.Helper()
	return s.waitJob(key, project, id, fmt.Sprintf("message %d runs", seq), func(j jobView) bool {
		return len(j.Messages) >= seq && j.Messages[seq-1].Status == "running"
	})
}

// ---------------------------------------------------------------------------
// Server-Sent Events.

type sseEvent struct {
	ID   int64
	Type string
	Data string
}

type sseReader struct{ r *bufio.Reader }

// next returns the next event, or io.EOF when the stream ended.
func (s *sseReader) next() (sseEvent, error) {
	var e sseEvent
	var data []string
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && !seen {
				return e, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return e, fmt.Errorf("stream ended inside an event: %q", line)
			}
			return e, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if !seen {
				continue // the blank line after a comment
			}
			e.Data = strings.Join(data, "\n")
			return e, nil
		case strings.HasPrefix(line, ":"):
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "id":
			id, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return e, fmt.Errorf("event id %q: %w", value, err)
			}
			e.ID = id
		case "event":
			e.Type = value
		case "data":
			data = append(data, value)
		default:
			return e, fmt.Errorf("unknown SSE field in %q", line)
		}
	}
}

// openEvents opens a job's event stream; the caller reads and closes it.
func (s *server) openEvents(key, project, id, query string, header map[string]string) (*http.Response, *sseReader) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), http.MethodGet, s.base+actionPath(project, id, "events")+query, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("open events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Fatalf("events: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		s.t.Fatalf("events: Content-Type %q", ct)
	}
	return resp, &sseReader{r: bufio.NewReader(resp.Body)}
}

// readAllEvents reads a stream until it ends, which it must within a
// deadline.
func (s *server) readAllEvents(key, project, id, query string, header map[string]string) []sseEvent {
	s.t.Helper()
	resp, sr := s.openEvents(key, project, id, query, header)
	defer resp.Body.Close()
	timer := time.AfterFunc(30*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	var out []sseEvent
	for {
		e, err := sr.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			s.t.Fatalf("read events (after %d): %v", len(out), err)
		}
		out = append(out, e)
	}
}

func eventTypes(es []sseEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func eventData(t *testing.T, e sseEvent) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		t.Fatalf("event %d %s: data %q is not a JSON object: %v", e.ID, e.Type, e.Data, err)
	}
	return m
}

// ---------------------------------------------------------------------------
// The document.

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := mustSpec(t)

	// A fresh load validates too (mustSpec dropped the servers).
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("openapi.json does not validate: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi is %q, want 3.0.3", doc.OpenAPI)
	}

	// Every route of routes.go is in the document, and nothing else.
	src, err := os.ReadFile("../httpapi/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(`t\.add\("([A-Z]+) ([^"]+)"`)
	inCode := map[string]bool{}
	for _, m := range pattern.FindAllStringSubmatch(string(src), -1) {
		// {path...} takes the rest of the path; OpenAPI names it {path}.
		inCode[m[1]+" "+strings.ReplaceAll(m[2], "...}", "}")] = true
	}
	if len(inCode) < 11 {
		t.Fatalf("found only %d routes in routes.go: %v", len(inCode), inCode)
	}
	inDoc := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			inDoc[method+" "+path] = true
		}
	}
	for r := range inCode {
		if !inDoc[r] {
			t.Errorf("route %s is in routes.go but not in openapi.json", r)
		}
	}
	for r := range inDoc {
		if !inCode[r] {
			t.Errorf("operation %s is in openapi.json but not in routes.go", r)
		}
	}

	// Agent operations: the bearer scheme and their error statuses.
	want := map[string][]int{
		"POST /v2/agent/{projectId}/job":              {201, 400, 401, 403, 404, 413, 415, 429, 503},
		"GET /v2/agent/{projectId}/job/{id}":          {200, 401, 403, 404, 503},
		"POST /v2/agent/{projectId}/job/{id}/message": {200, 400, 401, 403, 404, 409, 413, 415, 429, 503},
		"GET /v2/agent/{projectId}/jobs":              {200, 400, 401, 403, 404, 503},
		"POST /v2/agent/{projectId}/job/{id}/archive": {200, 401, 403, 404, 503},
		"POST /v2/agent/{projectId}/job/{id}/cancel":  {200, 401, 403, 404, 409, 503},
		"GET /v2/agent/{projectId}/job/{id}/events":   {200, 400, 401, 403, 404, 503},
		"GET /readyz": {200, 503},
	}
	for r, statuses := range want {
		method, path, _ := strings.Cut(r, " ")
		op := doc.Paths.Value(path).GetOperation(method)
		if op == nil {
			t.Errorf("%s: missing", r)
			continue
		}
		for _, st := range statuses {
			if op.Responses.Status(st) == nil {
				t.Errorf("%s: no %d response", r, st)
			}
		}
		if strings.HasPrefix(path, "/v2/") {
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			if len(sec) != 1 || sec[0]["bearerAuth"] == nil {
				t.Errorf("%s: security is %v, want bearerAuth", r, sec)
			}
			for _, st := range statuses {
				if st < 400 {
					continue
				}
				ct := op.Responses.Status(st).Value.Content.Get("application/json")
				if ct == nil || ct.Schema.Ref != "#/components/schemas/Error" {
					t.Errorf("%s %d: the body is not the Error schema", r, st)
				}
			}
		}
	}
	for _, r := range []string{"POST /v2/agent/{projectId}/job", "POST /v2/agent/{projectId}/job/{id}/message"} {
		method, path, _ := strings.Cut(r, " ")
		op := doc.Paths.Value(path).GetOperation(method)
		if op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
			t.Errorf("%s: no Idempotency-Key header", r)
		}
		if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/PromptBody" {
			t.Errorf("%s: the body is not PromptBody", r)
		}
		too := op.Responses.Status(429).Value
		for _, h := range []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
			if too.Headers[h] == nil || !too.Headers[h].Value.Required {
				t.Errorf("%s 429: header %s is not declared as required", r, h)
			}
		}
	}
	events := doc.Paths.Value("/v2/agent/{projectId}/job/{id}/events").Get
	if events.Parameters.GetByInAndName("header", "Last-Event-ID") == nil {
		t.Error("events: no Last-Event-ID header")
	}
	if events.Responses.Status(200).Value.Content.Get("text/event-stream") == nil {
		t.Error("events: 200 is not text/event-stream")
	}
	if doc.Paths.Value("/metrics").Get.Responses.Status(200).Value.Content.Get("text/plain") == nil {
		t.Error("metrics: 200 is not text/plain")
	}

	// Job and Message: every field required, nothing else allowed, and the
	// nullable fields exactly these.
	schemas := s.doc.Components.Schemas
	nullable := map[string][]string{
		"Job":     {"prLink", "archivedAt", "completedAt", "summary", "error", "prNumber", "workflow"},
		"Message": {"summary", "error", "startedAt", "finishedAt"},
		"JobList": {"nextCursor"},
	}
	for name, nulls := range nullable {
		sc := schemas[name].Value
		if sc.AdditionalProperties.Has == nil || *sc.AdditionalProperties.Has {
			t.Errorf("%s: additionalProperties is not false", name)
		}
		var props []string
		for p, ref := range sc.Properties {
			props = append(props, p)
			if got := ref.Value.Nullable; got != slices.Contains(nulls, p) {
				t.Errorf("%s.%s: nullable is %v", name, p, got)
			}
		}
		slices.Sort(props)
		req := slices.Sorted(slices.Values(sc.Required))
		if !slices.Equal(props, req) {
			t.Errorf("%s: required %v, want every property %v", name, req, props)
		}
	}
	job := schemas["Job"].Value.Properties
	if got := job["status"].Value.Enum; len(got) != 4 {
		t.Errorf("Job.status enum is %v", got)
	}
	for field, format := range map[string]string{"prLink": "uri", "createdAt": "date-time", "archivedAt": "date-time", "updatedAt": "date-time", "completedAt": "date-time"} {
		if got := job[field].Value.Format; got != format {
			t.Errorf("Job.%s: format %q, want %q", field, got, format)
		}
	}
	if got := schemas["Message"].Value.Properties["status"].Value.Enum; len(got) != 5 {
		t.Errorf("Message.status enum is %v", got)
	}
	p := schemas["PromptBody"].Value.Properties["prompt"].Value
	if p.MinLength != 1 || p.MaxLength == nil || *p.MaxLength != agentjob.MaxPromptBytes {
		t.Errorf("PromptBody.prompt: minLength %d maxLength %v", p.MinLength, p.MaxLength)
	}
	if e := schemas["Error"].Value; !slices.Equal(e.Required, []string{"error"}) {
		t.Errorf("Error: required %v", e.Required)
	}
	bearer := doc.Components.SecuritySchemes["bearerAuth"]
	if bearer == nil || bearer.Value.Type != "http" || bearer.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth scheme: %+v", bearer)
	}
}

// ---------------------------------------------------------------------------
// Operations endpoints.

func TestOperations(t *testing.T) {
	t.Parallel()
	s := setup(t)

	r := s.get("/healthz", "")
	expectStatus(t, r, http.StatusOK)
	if got := decode[map[string]string](t, r); got["status"] != "ok" {
		t.Errorf("healthz: %s", r)
	}
	r = s.get("/readyz", "")
	expectStatus(t, r, http.StatusOK)
	if got := decode[map[string]string](t, r); got["status"] != "ready" {
		t.Errorf("readyz: %s", r)
	}

	r = s.get("/openapi.json", "")
	expectStatus(t, r, http.StatusOK)
	if !bytes.Equal(r.body, httpapi.OpenAPIDocument()) {
		t.Error("/openapi.json is not the embedded document")
	}

	// X-Request-Id: echoed when valid, made up otherwise.
	r = s.do(request{method: http.MethodGet, path: "/healthz", header: map[string]string{"X-Request-Id": "e2e-request-42"}})
	if got := r.header.Get("X-Request-Id"); got != "e2e-request-42" {
		t.Errorf("X-Request-Id %q, want the one sent", got)
	}
	r = s.get("/healthz", "")
	if got := r.header.Get("X-Request-Id"); got == "" {
		t.Error("no X-Request-Id on a request without one")
	}
	r = s.do(request{method: http.MethodGet, path: "/healthz", header: map[string]string{"X-Request-Id": strings.Repeat("x", 65)}})
	if got := r.header.Get("X-Request-Id"); got == "" || len(got) > 64 {
		t.Errorf("an over-long X-Request-Id was answered with %q", got)
	}
	// Errors carry it too.
	r = s.do(request{method: http.MethodGet, path: jobPath(projA, "x"), header: map[string]string{"X-Request-Id": "e2e-error-1"}})
	expectError(t, "no key", r, http.StatusUnauthorized)
	if got := r.header.Get("X-Request-Id"); got != "e2e-error-1" {
		t.Errorf("error answer X-Request-Id %q", got)
	}

	r = s.get("/metrics", "")
	expectStatus(t, r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("metrics Content-Type %q", ct)
	}
	for _, want := range []string{"docsmith_http_requests_total", `route="GET /healthz"`, `status="401"`, "docsmith_http_request_duration_seconds",
		`docsmith_build_info{commit="0123abc",version="v1.2.3-test"} 1`} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("metrics do not contain %s", want)
		}
	}

	// The fallbacks: JSON 404 for unknown paths, JSON 405 with Allow.
	r = s.get("/v3/nothing/here", s.adminA)
	expectError(t, "unknown path", r, http.StatusNotFound, "/v3/nothing/here", "/openapi.json")
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodDelete, jobPath(projA, "some-id"), "GET, HEAD"},
		{http.MethodPut, jobsPath(projA), "POST"},
		{http.MethodGet, jobsPath(projA), "POST"},
		{http.MethodGet, actionPath(projA, "some-id", "cancel"), "POST"},
		{http.MethodPost, listPath(projA, ""), "GET, HEAD"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
	} {
		r := s.do(request{method: c.method, path: c.path, key: s.adminA})
		expectError(t, c.method+" "+c.path, r, http.StatusMethodNotAllowed, c.method, c.allow)
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}

// ---------------------------------------------------------------------------
// The job's life.

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	s := setup(t)

	const first = "Document the new flag and open a pr"
	r := s.post(jobsPath(projA), s.adminA, prompt(first))
	expectStatus(t, r, http.StatusCreated)
	if r.header.Get("RateLimit-Limit") != "100" || r.header.Get("RateLimit-Remaining") != "99" {
		t.Errorf("create: RateLimit-Limit %q RateLimit-Remaining %q, want 100 and 99", r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"))
	}
	created := decode[jobView](t, r)
	// The seed's fields.
	if created.ID == "" || created.Status != "active" || created.PRLink != nil || created.ArchivedAt != nil {
		t.Errorf("created job: id %q status %q prLink %s archivedAt %s", created.ID, created.Status, str(created.PRLink), str(created.ArchivedAt))
	}
	if created.Source.Repository != testRepo || !strings.HasPrefix(created.Source.Ref, "docsmith/") {
		t.Errorf("created job source: %+v", created.Source)
	}
	if !strings.Contains(created.Source.Ref, "document-the-new-flag") {
		t.Errorf("branch %q has no slug of the prompt", created.Source.Ref)
	}
	if created.Model != "builtin" {
		t.Errorf("model %q, want builtin", created.Model)
	}
	if _, err := time.Parse(time.RFC3339Nano, created.CreatedAt); err != nil {
		t.Errorf("createdAt %q: %v", created.CreatedAt, err)
	}
	// The additive fields.
	if created.ProjectID != projA || created.BaseRef != "main" || created.CompletedAt != nil || created.Error != nil || created.PRNumber != nil || len(created.FilesChanged) != 0 {
		t.Errorf("created job additive fields: %+v", created)
	}
	if len(created.Messages) != 1 || created.Messages[0].Seq != 1 || created.Messages[0].Prompt != first {
		t.Errorf("created job messages: %+v", created.Messages)
	}

	done := s.waitSettled(s.adminA, projA, created.ID)
	if done.Status != "completed" || str(done.PRLink) != testPRLink || done.PRNumber == nil || *done.PRNumber != testPRNumber {
		t.Fatalf("finished job: status %s prLink %s prNumber %v", done.Status, str(done.PRLink), done.PRNumber)
	}
	if done.CompletedAt == nil || done.Summary == nil || !slices.Equal(done.FilesChanged, []string{"guides/setup.mdx"}) || done.Error != nil {
		t.Errorf("finished job: %+v", done)
	}
	if m := done.Messages[0]; m.Status != "done" || m.Attempts != 1 || m.StartedAt == nil || m.FinishedAt == nil || m.Summary == nil {
		t.Errorf("finished message: %+v", m)
	}
	if done.Source != created.Source || done.CreatedAt != created.CreatedAt {
		t.Errorf("source or createdAt changed: %+v -> %+v", created, done)
	}

	// A follow-up on a completed job: 200, active again, same branch.
	r = s.post(actionPath(projA, created.ID, "message"), s.adminA, prompt("Also mention the default value"))
	expectStatus(t, r, http.StatusOK)
	followed := decode[jobView](t, r)
	if followed.Status != "active" || len(followed.Messages) != 2 || followed.Messages[1].Status != "queued" || followed.Messages[1].Seq != 2 {
		t.Errorf("after a follow-up: status %s messages %+v", followed.Status, followed.Messages)
	}
	if str(followed.PRLink) != testPRLink || followed.Source.Ref != created.Source.Ref {
		t.Errorf("a follow-up changed prLink or the branch: %+v", followed)
	}
	again := s.waitSettled(s.adminA, projA, created.ID)
	if again.Status != "completed" || str(again.PRLink) != testPRLink || again.Messages[1].Status != "done" {
		t.Errorf("after the follow-up finished: %+v", again)
	}

	// Archive; archive again is 200 and unchanged.
	r = s.post(actionPath(projA, created.ID, "archive"), s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	archived := decode[jobView](t, r)
	if archived.Status != "archived" || archived.ArchivedAt == nil || str(archived.PRLink) != testPRLink {
		t.Fatalf("archived job: %+v", archived)
	}
	r = s.post(actionPath(projA, created.ID, "archive"), s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	if twice := decode[jobView](t, r); str(twice.ArchivedAt) != str(archived.ArchivedAt) || twice.UpdatedAt != archived.UpdatedAt || twice.Status != "archived" {
		t.Errorf("archiving again changed the job: %+v -> %+v", archived, twice)
	}
	if got := s.getJob(s.adminA, projA, created.ID); got.Status != "archived" || str(got.ArchivedAt) != str(archived.ArchivedAt) {
		t.Errorf("get after archive: %+v", got)
	}

	// 409: an archived job takes no message and cannot be canceled.
	r = s.post(actionPath(projA, created.ID, "message"), s.adminA, prompt("one more thing"))
	expectError(t, "message to an archived job", r, http.StatusConflict, "archived", "create a new job")
	r = s.post(actionPath(projA, created.ID, "cancel"), s.adminA, nil)
	expectError(t, "cancel of an archived job", r, http.StatusConflict, "archived")
	if got := s.getJob(s.adminA, projA, created.ID); len(got.Messages) != 2 {
		t.Errorf("a refused message was added: %+v", got.Messages)
	}
}

func TestJobWithoutChange(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA2, "Check the wording of the intro")
	if j.BaseRef != "develop" || j.Source.Repository != "https://git.example/acme/api-docs.git" {
		t.Errorf("job of %s: baseRef %q repository %q", projA2, j.BaseRef, j.Source.Repository)
	}
	done := s.waitSettled(s.adminA, projA2, j.ID)
	if done.Status != "completed" || done.PRLink != nil || done.PRNumber != nil || done.Summary == nil || len(done.FilesChanged) != 0 || done.CompletedAt == nil {
		t.Errorf("a job without change: %+v", done)
	}
}

func TestJobFailureAndFollowUp(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "please fail now")
	failed := s.waitSettled(s.adminA, projA, j.ID)
	if failed.Status != "failed" || str(failed.Error) != failMessage || failed.Messages[0].Status != "failed" || str(failed.Messages[0].Error) != failMessage {
		t.Fatalf("failed job: %+v", failed)
	}
	if failed.CompletedAt != nil || failed.PRLink != nil {
		t.Errorf("failed job: completedAt %s prLink %s", str(failed.CompletedAt), str(failed.PRLink))
	}
	// A follow-up on a failed job makes it active again; it can then complete.
	r := s.post(actionPath(projA, j.ID, "message"), s.adminA, prompt("try again and open a pr"))
	expectStatus(t, r, http.StatusOK)
	if got := decode[jobView](t, r); got.Status != "active" {
		t.Errorf("follow-up on a failed job: status %s", got.Status)
	}
	done := s.waitSettled(s.adminA, projA, j.ID)
	if done.Status != "completed" || done.Error != nil || str(done.PRLink) != testPRLink {
		t.Errorf("after the follow-up: status %s error %s prLink %s", done.Status, str(done.Error), str(done.PRLink))
	}
	// Cancel of a job that is not active is 409.
	r = s.post(actionPath(projA, j.ID, "cancel"), s.adminA, nil)
	expectError(t, "cancel of a completed job", r, http.StatusConflict, "only an active job can be canceled", "completed")
}

func TestCancel(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "block until canceled")
	s.waitRunning(s.adminA, projA, j.ID, 1)

	// A message to an active job is queued behind the running turn.
	r := s.post(actionPath(projA, j.ID, "message"), s.adminA, prompt("and then this"))
	expectStatus(t, r, http.StatusOK)
	queued := decode[jobView](t, r)
	if queued.Status != "active" || len(queued.Messages) != 2 || queued.Messages[0].Status != "running" || queued.Messages[1].Status != "queued" {
		t.Fatalf("message to an active job: %+v", queued)
	}

	r = s.post(actionPath(projA, j.ID, "cancel"), s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	canceled := decode[jobView](t, r)
	if canceled.Status != "failed" || str(canceled.Error) != "canceled by request" {
		t.Fatalf("canceled job: status %s error %s", canceled.Status, str(canceled.Error))
	}
	if canceled.Messages[1].Status != "canceled" {
		t.Errorf("the queued message was not dropped: %+v", canceled.Messages[1])
	}
	// The running turn hears it and stops.
	final := s.waitJob(s.adminA, projA, j.ID, "the running turn is canceled", func(j jobView) bool {
		return j.Messages[0].Status == "canceled"
	})
	if final.Status != "failed" || str(final.Error) != "canceled by request" || final.Messages[0].FinishedAt == nil {
		t.Errorf("after the turn stopped: %+v", final)
	}
	r = s.post(actionPath(projA, j.ID, "cancel"), s.adminA, nil)
	expectError(t, "cancel again", r, http.StatusConflict, "only an active job can be canceled", "failed")
}

func TestListJobs(t *testing.T) {
	t.Parallel()
	s := setup(t)
	prompts := []string{"first edit", "second edit: fail", "third edit", "fourth edit: fail", "fifth edit"}
	var ids []string
	for _, p := range prompts {
		ids = append(ids, s.createJob(s.adminA, projA, p).ID)
	}
	for _, id := range ids {
		s.waitSettled(s.adminA, projA, id)
	}
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	// Every page size walks all jobs, newest first, with nextCursor null at
	// the end.
	for _, limit := range []int{1, 2, 4, 5, 100} {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > len(ids) {
				t.Fatalf("limit %d: more pages than jobs", limit)
			}
			q := fmt.Sprintf("?limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			r := s.get(listPath(projA, q), s.adminA)
			expectStatus(t, r, http.StatusOK)
			page := decode[listView](t, r)
			if len(page.Jobs) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Jobs))
			}
			for _, j := range page.Jobs {
				got = append(got, j.ID)
			}
			if page.NextCursor == nil {
				break
			}
			if len(page.Jobs) != limit {
				t.Errorf("limit %d: a page of %d that is not the last", limit, len(page.Jobs))
			}
			cursor = *page.NextCursor
		}
		if !slices.Equal(got, newestFirst) {
			t.Errorf("limit %d: listed %v, want %v", limit, got, newestFirst)
		}
	}
	// Without parameters: the default page holds all five.
	r := s.get(listPath(projA, ""), s.adminA)
	expectStatus(t, r, http.StatusOK)
	if page := decode[listView](t, r); len(page.Jobs) != 5 || page.NextCursor != nil {
		t.Errorf("default page: %d jobs, nextCursor %s", len(page.Jobs), str(page.NextCursor))
	}

	// The status filter, also with pagination.
	s.post(actionPath(projA, ids[0], "archive"), s.adminA, nil)
	for status, want := range map[string][]string{
		"failed":    {ids[3], ids[1]},
		"completed": {ids[4], ids[2]},
		"archived":  {ids[0]},
		"active":    nil,
	} {
		var got []string
		cursor := ""
		for {
			q := "?limit=1&status=" + status
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			r := s.get(listPath(projA, q), s.adminA)
			expectStatus(t, r, http.StatusOK)
			page := decode[listView](t, r)
			for _, j := range page.Jobs {
				if j.Status != status {
					t.Errorf("status=%s listed a %s job", status, j.Status)
				}
				got = append(got, j.ID)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("status=%s: %v, want %v", status, got, want)
		}
	}

	// Another project's list is its own.
	r = s.get(listPath(projA2, ""), s.adminA)
	expectStatus(t, r, http.StatusOK)
	if page := decode[listView](t, r); len(page.Jobs) != 0 || page.NextCursor != nil {
		t.Errorf("%s lists %d jobs", projA2, len(page.Jobs))
	}
}

// ---------------------------------------------------------------------------
// Events.

func TestEvents(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "add a section and open a pr")
	s.waitSettled(s.adminA, projA, j.ID)

	events := s.readAllEvents(s.adminA, projA, j.ID, "", nil)
	want := []string{"status", "message.queued", "turn.started", "turn.finished", "status"}
	if !slices.Equal(eventTypes(events), want) {
		t.Fatalf("event types %v, want %v", eventTypes(events), want)
	}
	for i := 1; i < len(events); i++ {
		if events[i].ID <= events[i-1].ID {
			t.Errorf("event ids do not grow: %d then %d", events[i-1].ID, events[i].ID)
		}
	}
	if d := eventData(t, events[0]); d["status"] != "active" {
		t.Errorf("first status event: %v", d)
	}
	if d := eventData(t, events[1]); d["seq"] != 1.0 {
		t.Errorf("message.queued: %v", d)
	}
	if d := eventData(t, events[2]); d["seq"] != 1.0 || d["attempt"] != 1.0 {
		t.Errorf("turn.started: %v", d)
	}
	if d := eventData(t, events[3]); d["seq"] != 1.0 || d["state"] != "done" {
		t.Errorf("turn.finished: %v", d)
	}
	if d := eventData(t, events[4]); d["status"] != "completed" || d["prLink"] != testPRLink {
		t.Errorf("last status event: %v", d)
	}

	// Resume: only later events.
	later := s.readAllEvents(s.adminA, projA, j.ID, "", map[string]string{"Last-Event-ID": strconv.FormatInt(events[1].ID, 10)})
	if !slices.Equal(eventTypes(later), want[2:]) || later[0].ID != events[2].ID {
		t.Errorf("after Last-Event-ID %d: %v", events[1].ID, later)
	}
	// The query parameter does the same for clients that cannot set headers.
	after := s.readAllEvents(s.adminA, projA, j.ID, "?lastEventId="+strconv.FormatInt(events[3].ID, 10), nil)
	if !slices.Equal(eventTypes(after), want[4:]) {
		t.Errorf("after lastEventId %d: %v", events[3].ID, eventTypes(after))
	}
	// Resuming after the last event of a settled job ends at once.
	if rest := s.readAllEvents(s.adminA, projA, j.ID, "", map[string]string{"Last-Event-ID": strconv.FormatInt(events[4].ID, 10)}); len(rest) != 0 {
		t.Errorf("after the last event: %v", rest)
	}

	// A bad Last-Event-ID is 400.
	resp := s.do(request{method: http.MethodGet, path: actionPath(projA, j.ID, "events"), key: s.adminA, header: map[string]string{"Last-Event-ID": "abc"}})
	expectError(t, "Last-Event-ID abc", resp, http.StatusBadRequest, "Last-Event-ID")
	resp = s.get(actionPath(projA, j.ID, "events")+"?lastEventId=-1", s.adminA)
	expectError(t, "lastEventId -1", resp, http.StatusBadRequest, "Last-Event-ID")
}

// TestEventsLive follows a running job: the stream delivers events as they
// happen and ends when the job settles.
func TestEventsLive(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "block until canceled")

	resp, sr := s.openEvents(s.adminA, projA, j.ID, "", nil)
	defer resp.Body.Close()
	timer := time.AfterFunc(30*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()

	var seen []sseEvent
	for {
		e, err := sr.next()
		if err != nil {
			t.Fatalf("stream ended before turn.started: %v (events %v)", err, eventTypes(seen))
		}
		seen = append(seen, e)
		if e.Type == "turn.started" {
			break
		}
	}
	r := s.post(actionPath(projA, j.ID, "cancel"), s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	var failedEvent bool
	for {
		e, err := sr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		seen = append(seen, e)
		if e.Type == "status" {
			d := eventData(t, e)
			failedEvent = d["status"] == "failed" && d["error"] == "canceled by request"
		}
	}
	if !failedEvent {
		t.Errorf("no status event failed/canceled by request in %v", eventTypes(seen))
	}
	// Once the turn has stopped, the whole stream has its turn.finished too.
	s.waitJob(s.adminA, projA, j.ID, "the turn is canceled", func(j jobView) bool { return j.Messages[0].Status == "canceled" })
	var finished bool
	for _, e := range s.readAllEvents(s.adminA, projA, j.ID, "", nil) {
		if e.Type == "turn.finished" {
			finished = eventData(t, e)["state"] == "canceled"
		}
	}
	if !finished {
		t.Error("no turn.finished with state canceled")
	}
}

// ---------------------------------------------------------------------------
// Errors.

// agentEndpoints are the seven agent operations, for a project and a job.
func agentEndpoints(project, job string) []request {
	return []request{
		{method: http.MethodPost, path: jobsPath(project), json: prompt("x")},
		{method: http.MethodGet, path: jobPath(project, job)},
		{method: http.MethodPost, path: actionPath(project, job, "message"), json: prompt("x")},
		{method: http.MethodGet, path: listPath(project, "")},
		{method: http.MethodPost, path: actionPath(project, job, "archive")},
		{method: http.MethodPost, path: actionPath(project, job, "cancel")},
		{method: http.MethodGet, path: actionPath(project, job, "events")},
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "a job to message")

	bodies := []struct {
		name      string
		body      string
		fragments []string
	}{
		{"missing prompt", `{}`, []string{`"prompt"`, "required"}},
		{"null prompt", `{"prompt": null}`, []string{`"prompt"`, "required"}},
		{"prompt a number", `{"prompt": 5}`, []string{`"prompt"`, "must be a string", "number"}},
		{"prompt an object", `{"prompt": {"text": "x"}}`, []string{`"prompt"`, "must be a string"}},
		{"prompt an array", `{"prompt": ["x"]}`, []string{`"prompt"`, "must be a string"}},
		{"empty prompt", `{"prompt": ""}`, []string{"prompt", "non-space"}},
		{"space prompt", `{"prompt": " \n\t "}`, []string{"prompt", "non-space"}},
		{"prompt over 32 KiB", `{"prompt": "` + strings.Repeat("a", agentjob.MaxPromptBytes+1) + `"}`, []string{"prompt", "32769", "32 KiB"}},
		{"prompt over 32 KiB in multi-byte characters", `{"prompt": "` + strings.Repeat("é", agentjob.MaxPromptBytes/2+1) + `"}`, []string{"prompt", "32 KiB"}},
		{"bad JSON", `{"prompt": }`, []string{"not valid JSON"}},
		{"truncated JSON", `{"prompt": "x"`, []string{"ends in the middle"}},
		{"trailing data", `{"prompt": "x"} {"prompt": "y"}`, []string{"data after the JSON object"}},
		{"trailing garbage", `{"prompt": "x"}]`, []string{"after the JSON object"}},
		{"an array body", `["x"]`, []string{"JSON object", "array"}},
		{"a string body", `"x"`, []string{"JSON object", "string"}},
		{"whitespace body", "  \n", []string{"empty"}},
	}
	for _, c := range bodies {
		r := s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, body: c.body})
		expectError(t, "create: "+c.name, r, http.StatusBadRequest, c.fragments...)
		r = s.do(request{method: http.MethodPost, path: actionPath(projA, j.ID, "message"), key: s.adminA, body: c.body})
		expectError(t, "message: "+c.name, r, http.StatusBadRequest, c.fragments...)
	}
	// An empty body.
	r := s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, header: map[string]string{"Content-Type": "application/json"}})
	expectError(t, "create: no body", r, http.StatusBadRequest, "empty")

	// The boundary: exactly 32 KiB is accepted; unknown fields are ignored.
	r = s.post(jobsPath(projA), s.adminA, map[string]any{"prompt": strings.Repeat("b", agentjob.MaxPromptBytes), "extra": true})
	expectStatus(t, r, http.StatusCreated)
	// A charset parameter is fine.
	r = s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, body: `{"prompt":"x"}`, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
	expectStatus(t, r, http.StatusCreated)

	// A bad Idempotency-Key.
	for _, key := range []string{"has space", strings.Repeat("k", 256)} {
		r := s.post(jobsPath(projA), s.adminA, prompt("x"), "Idempotency-Key", key)
		expectError(t, "Idempotency-Key "+key[:8], r, http.StatusBadRequest, "Idempotency-Key")
		r = s.post(actionPath(projA, j.ID, "message"), s.adminA, prompt("x"), "Idempotency-Key", key)
		expectError(t, "message Idempotency-Key "+key[:8], r, http.StatusBadRequest, "Idempotency-Key")
	}

	// List parameters.
	for q, fragment := range map[string]string{
		"?limit=0":       "limit",
		"?limit=101":     "limit",
		"?limit=abc":     "limit",
		"?limit=-1":      "limit",
		"?limit=1.5":     "limit",
		"?status=done":   "status",
		"?status=ACTIVE": "status",
		"?cursor=!!!":    "cursor",
		"?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("no-colon")):   "cursor",
		"?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("abc:job-id")): "cursor",
		"?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("123:")):       "cursor",
	} {
		r := s.get(listPath(projA, q), s.adminA)
		expectError(t, "list "+q, r, http.StatusBadRequest, fragment)
	}

	// 415: the body must be declared JSON.
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/jsonx", "multipart/form-data; boundary=x"} {
		h := map[string]string{"Content-Type": ct}
		r := s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, body: `{"prompt":"x"}`, header: h})
		expectError(t, "create with Content-Type "+ct, r, http.StatusUnsupportedMediaType, "Content-Type: application/json")
		r = s.do(request{method: http.MethodPost, path: actionPath(projA, j.ID, "message"), key: s.adminA, body: `{"prompt":"x"}`, header: h})
		expectError(t, "message with Content-Type "+ct, r, http.StatusUnsupportedMediaType, "Content-Type: application/json")
	}

	// None of these added a message or a job.
	if got := s.getJob(s.adminA, projA, j.ID); len(got.Messages) != 1 {
		t.Errorf("refused messages were added: %d messages", len(got.Messages))
	}
	r = s.get(listPath(projA, ""), s.adminA)
	if page := decode[listView](t, r); len(page.Jobs) != 3 {
		t.Errorf("%d jobs, want 3", len(page.Jobs))
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	s := setup(t, "DOCSMITH_MAX_BODY_BYTES=2048")
	j := s.createJob(s.adminA, projA, strings.Repeat("c", 2000))
	big := prompt(strings.Repeat("d", 3000))
	r := s.post(jobsPath(projA), s.adminA, big)
	expectError(t, "create", r, http.StatusRequestEntityTooLarge, "2048 bytes")
	r = s.post(actionPath(projA, j.ID, "message"), s.adminA, big)
	expectError(t, "message", r, http.StatusRequestEntityTooLarge, "2048 bytes")
	// 415 is checked before the size.
	r = s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, body: `{"prompt":"` + strings.Repeat("e", 3000) + `"}`, header: map[string]string{"Content-Type": "text/plain"}})
	expectError(t, "large text/plain", r, http.StatusUnsupportedMediaType)
	if got := s.getJob(s.adminA, projA, j.ID); len(got.Messages) != 1 {
		t.Errorf("a refused message was added")
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "a job")

	unknown, err := apikey.Generate(apikey.Admin)
	if err != nil {
		t.Fatal(err)
	}
	unknownMessage := ""
	for _, e := range agentEndpoints(projA, j.ID) {
		name := e.method + " " + e.path
		// 401: no header, other schemes, no key, unknown keys.
		for _, c := range []struct {
			what, header, fragment string
		}{
			{"no Authorization", "", "missing"},
			{"Basic scheme", "Basic YWRtaW46c2VjcmV0", "Bearer <key>"},
			{"Bearer without key", "Bearer ", "Bearer <key>"},
			{"bare key", s.adminA, "Bearer <key>"},
			{"malformed key", "Bearer not-a-key", "not valid"},
			{"unknown key", "Bearer " + unknown.Secret, "not valid"},
			{"tampered key", "Bearer " + s.adminA[:len(s.adminA)-2] + "zz", "not valid"},
		} {
			q := e
			q.header = map[string]string{}
			if c.header != "" {
				q.header["Authorization"] = c.header
			}
			msg := expectError(t, name+": "+c.what, s.do(q), http.StatusUnauthorized, c.fragment)
			if strings.Contains(msg, s.adminA) || strings.Contains(msg, unknown.Secret) {
				t.Errorf("%s: the message repeats the key: %q", name, msg)
			}
			if c.what == "unknown key" {
				unknownMessage = msg
			}
		}
		// Lower-case scheme is accepted.
		q := e
		q.header = map[string]string{"Authorization": "bearer " + s.assistantA}
		expectError(t, name+": lower-case bearer", s.do(q), http.StatusForbidden)

		// 403: an assistant key on every agent endpoint.
		q = e
		q.key = s.assistantA
		expectError(t, name+": assistant key", s.do(q), http.StatusForbidden, "admin key", "svc_dsc_")
	}
	// Nothing was created, messaged, archived or canceled by those.
	if got := s.getJob(s.adminA, projA, j.ID); got.Status == "archived" || str(got.Error) == "canceled by request" || len(got.Messages) != 1 {
		t.Errorf("an unauthorized request changed the job: %+v", got)
	}

	// A revoked key: works, is revoked through the CLI, then is 401 exactly
	// as an unknown one.
	key := s.newKey(orgA, "admin")
	expectStatus(t, s.get(jobPath(projA, j.ID), key), http.StatusOK)
	parsed, err := apikey.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	if list := s.cli("key", "list", "--org", orgA); !strings.Contains(list, parsed.ID) || strings.Contains(list, key) {
		t.Errorf("key list does not show the key's id, or shows its secret:\n%s", list)
	}
	s.cli("key", "revoke", "--org", orgA, parsed.ID)
	for _, e := range agentEndpoints(projA, j.ID) {
		e.key = key
		msg := expectError(t, e.method+" "+e.path+": revoked key", s.do(e), http.StatusUnauthorized)
		if msg != unknownMessage {
			t.Errorf("revoked key message %q differs from an unknown key's %q", msg, unknownMessage)
		}
	}
	// Revoking one key leaves the others working.
	expectStatus(t, s.get(jobPath(projA, j.ID), s.adminA), http.StatusOK)
}

// shape replaces the ids in a message, so messages about different ids can
// be compared.
func shape(msg string, ids ...string) string {
	for _, id := range ids {
		msg = strings.ReplaceAll(msg, id, "ID")
	}
	return msg
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	s := setup(t)
	j := s.createJob(s.adminA, projA, "a job")

	// An unknown project, on every endpoint.
	for _, e := range agentEndpoints("no-such-project", j.ID) {
		e.key = s.adminA
		expectError(t, e.method+" "+e.path, s.do(e), http.StatusNotFound, `project "no-such-project" not found`)
	}
	// An unknown job, on every endpoint that names one.
	const missing = "00000000-0000-4000-8000-000000000000"
	for _, e := range agentEndpoints(projA, missing) {
		if !strings.Contains(e.path, missing) {
			continue
		}
		e.key = s.adminA
		expectError(t, e.method+" "+e.path, s.do(e), http.StatusNotFound, `job "`+missing+`" not found`)
	}
	// A job of another project of the same organization is not there either.
	for _, e := range agentEndpoints(projA2, j.ID) {
		if !strings.Contains(e.path, j.ID) {
			continue
		}
		e.key = s.adminA
		expectError(t, e.method+" "+e.path, s.do(e), http.StatusNotFound, `job "`+j.ID+`" not found`)
	}
	// A message to an unknown job is 404 even with a bad body.
	r := s.do(request{method: http.MethodPost, path: actionPath(projA, missing, "message"), key: s.adminA, body: "{"})
	expectError(t, "message with a bad body to an unknown job", r, http.StatusNotFound)
}

func TestOrganizationsAreIsolated(t *testing.T) {
	t.Parallel()
	s := setup(t)
	jA := s.createJob(s.adminA, projA, "acme's job")
	jB := s.createJob(s.adminB, projB, "globex's job")
	const missing = "00000000-0000-4000-8000-000000000000"

	unknownProject := map[string]string{}
	for _, e := range agentEndpoints("no-such-project", missing) {
		e.key = s.adminB
		unknownProject[e.method+" "+e.path] = shape(expectError(t, "unknown project", s.do(e), http.StatusNotFound), "no-such-project")
	}
	// B's key on A's project: 404, worded as for a project that does not exist.
	for i, e := range agentEndpoints(projA, jA.ID) {
		e.key = s.adminB
		msg := expectError(t, "B on A's project: "+e.method+" "+e.path, s.do(e), http.StatusNotFound)
		ref := agentEndpoints("no-such-project", missing)[i]
		if want := unknownProject[ref.method+" "+ref.path]; shape(msg, projA) != want {
			t.Errorf("%s %s: %q does not read like %q", e.method, e.path, msg, want)
		}
	}
	// B's key on B's project, with A's job id: 404 as for an unknown job; and
	// the other way round.
	for _, c := range []struct {
		key, project, other string
	}{
		{s.adminB, projB, jA.ID},
		{s.adminA, projA, jB.ID},
	} {
		for i, e := range agentEndpoints(c.project, c.other) {
			if !strings.Contains(e.path, c.other) {
				continue
			}
			e.key = c.key
			msg := expectError(t, "foreign job: "+e.method+" "+e.path, s.do(e), http.StatusNotFound)
			ref := agentEndpoints(c.project, missing)[i]
			ref.key = c.key
			want := expectError(t, "unknown job", s.do(ref), http.StatusNotFound)
			if shape(msg, c.other) != shape(want, missing) {
				t.Errorf("%s %s: %q does not read like %q", e.method, e.path, msg, want)
			}
		}
	}
	// Each organization lists only its own.
	for _, c := range []struct {
		key, project, own string
	}{
		{s.adminA, projA, jA.ID},
		{s.adminB, projB, jB.ID},
	} {
		r := s.get(listPath(c.project, ""), c.key)
		expectStatus(t, r, http.StatusOK)
		page := decode[listView](t, r)
		if len(page.Jobs) != 1 || page.Jobs[0].ID != c.own {
			t.Errorf("%s lists %+v", c.project, page.Jobs)
		}
	}
	// And nothing happened to either job.
	for _, c := range []struct{ key, project, id string }{{s.adminA, projA, jA.ID}, {s.adminB, projB, jB.ID}} {
		j := s.waitSettled(c.key, c.project, c.id)
		if j.Status != "completed" || len(j.Messages) != 1 || j.ArchivedAt != nil {
			t.Errorf("job %s was touched across organizations: %+v", c.id, j)
		}
	}
}

// ---------------------------------------------------------------------------
// Idempotency.

func TestIdempotentRetries(t *testing.T) {
	t.Parallel()
	s := setup(t)

	r1 := s.post(jobsPath(projA), s.adminA, prompt("write the changelog"), "Idempotency-Key", "create-1")
	expectStatus(t, r1, http.StatusCreated)
	first := decode[jobView](t, r1)
	r2 := s.post(jobsPath(projA), s.adminA, prompt("write the changelog"), "Idempotency-Key", "create-1")
	expectStatus(t, r2, http.StatusCreated)
	if again := decode[jobView](t, r2); again.ID != first.ID || again.CreatedAt != first.CreatedAt {
		t.Errorf("a retry made job %s, the first was %s", again.ID, first.ID)
	}
	// The same key with another prompt is refused.
	r := s.post(jobsPath(projA), s.adminA, prompt("something else"), "Idempotency-Key", "create-1")
	expectError(t, "same key, other prompt", r, http.StatusBadRequest, "Idempotency-Key")
	// Another key, or the same key in another project, is a new job.
	other := decode[jobView](t, s.post(jobsPath(projA), s.adminA, prompt("write the changelog"), "Idempotency-Key", "create-2"))
	elsewhere := decode[jobView](t, s.post(jobsPath(projA2), s.adminA, prompt("write the changelog"), "Idempotency-Key", "create-1"))
	if other.ID == first.ID || elsewhere.ID == first.ID || other.ID == "" || elsewhere.ID == "" {
		t.Errorf("different requests share job ids: %s %s %s", first.ID, other.ID, elsewhere.ID)
	}
	page := decode[listView](t, s.get(listPath(projA, ""), s.adminA))
	if len(page.Jobs) != 2 {
		t.Errorf("%s has %d jobs, want 2", projA, len(page.Jobs))
	}

	// Messages: a retry adds nothing.
	s.waitSettled(s.adminA, projA, first.ID)
	m1 := s.post(actionPath(projA, first.ID, "message"), s.adminA, prompt("and the upgrade notes"), "Idempotency-Key", "msg-1")
	expectStatus(t, m1, http.StatusOK)
	m2 := s.post(actionPath(projA, first.ID, "message"), s.adminA, prompt("and the upgrade notes"), "Idempotency-Key", "msg-1")
	expectStatus(t, m2, http.StatusOK)
	if got := decode[jobView](t, m2); got.ID != first.ID || len(got.Messages) != 2 {
		t.Errorf("message retry: %d messages", len(got.Messages))
	}
	r = s.post(actionPath(projA, first.ID, "message"), s.adminA, prompt("other notes"), "Idempotency-Key", "msg-1")
	expectError(t, "same message key, other prompt", r, http.StatusBadRequest, "Idempotency-Key")
	done := s.waitSettled(s.adminA, projA, first.ID)
	if len(done.Messages) != 2 {
		t.Errorf("after retries the job has %d messages, want 2", len(done.Messages))
	}
	// A retry after the job moved on returns it as it is now.
	m3 := s.post(actionPath(projA, first.ID, "message"), s.adminA, prompt("and the upgrade notes"), "Idempotency-Key", "msg-1")
	expectStatus(t, m3, http.StatusOK)
	if got := decode[jobView](t, m3); got.Status != "completed" || len(got.Messages) != 2 {
		t.Errorf("late message retry: status %s, %d messages", got.Status, len(got.Messages))
	}
	// The message key is the job's: the same key on another job is new.
	r = s.post(actionPath(projA, other.ID, "message"), s.adminA, prompt("and the upgrade notes"), "Idempotency-Key", "msg-1")
	expectStatus(t, r, http.StatusOK)
	if got := decode[jobView](t, r); len(got.Messages) != 2 {
		t.Errorf("message to another job with the same key: %d messages", len(got.Messages))
	}
}

// ---------------------------------------------------------------------------
// Rate limits.

func TestRateLimit(t *testing.T) {
	t.Parallel()
	s := setup(t)

	// Refused requests do not count.
	expectError(t, "invalid create", s.do(request{method: http.MethodPost, path: jobsPath(projA), key: s.adminA, body: `{}`}), http.StatusBadRequest)
	expectError(t, "assistant key", s.post(jobsPath(projA), s.assistantA, prompt("x")), http.StatusForbidden)

	var firstID string
	for i := 1; i <= 100; i++ {
		var r reply
		if i == 1 {
			r = s.post(jobsPath(projA), s.adminA, prompt("job 1"), "Idempotency-Key", "first")
		} else {
			r = s.post(jobsPath(projA), s.adminA, prompt(fmt.Sprintf("job %d", i)))
		}
		if r.status != http.StatusCreated {
			t.Fatalf("create %d: %s", i, r)
		}
		if i == 1 {
			firstID = decode[jobView](t, r).ID
		}
		if got, want := r.header.Get("RateLimit-Remaining"), strconv.Itoa(100-i); got != want || r.header.Get("RateLimit-Limit") != "100" {
			t.Fatalf("create %d: RateLimit-Limit %q RateLimit-Remaining %q, want 100 and %s", i, r.header.Get("RateLimit-Limit"), got, want)
		}
	}
	check429 := func(what string, r reply) {
		t.Helper()
		expectError(t, what, r, http.StatusTooManyRequests, "rate limit", "agent requests per project", "100 per hour")
		retry, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || retry <= 0 || retry > 3600 {
			t.Errorf("%s: Retry-After %q", what, r.header.Get("Retry-After"))
		}
		reset, err := strconv.Atoi(r.header.Get("RateLimit-Reset"))
		if err != nil || reset <= 0 || reset > 3600 {
			t.Errorf("%s: RateLimit-Reset %q", what, r.header.Get("RateLimit-Reset"))
		}
		if r.header.Get("RateLimit-Limit") != "100" || r.header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("%s: RateLimit-Limit %q RateLimit-Remaining %q", what, r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"))
		}
	}
	check429("create 101", s.post(jobsPath(projA), s.adminA, prompt("job 101")))
	// Messages share the limit.
	check429("message over the limit", s.post(actionPath(projA, firstID, "message"), s.adminA, prompt("more")))
	// A retry of a request that was accepted is answered, not counted.
	r := s.post(jobsPath(projA), s.adminA, prompt("job 1"), "Idempotency-Key", "first")
	expectStatus(t, r, http.StatusCreated)
	if got := decode[jobView](t, r); got.ID != firstID {
		t.Errorf("retry over the limit: job %s, want %s", got.ID, firstID)
	}
	// Reads are not limited.
	expectStatus(t, s.get(jobPath(projA, firstID), s.adminA), http.StatusOK)
	// Another project of the same organization has its own limit.
	r = s.post(jobsPath(projA2), s.adminA, prompt("not limited"))
	expectStatus(t, r, http.StatusCreated)
	if r.header.Get("RateLimit-Remaining") != "99" {
		t.Errorf("%s: RateLimit-Remaining %q, want 99", projA2, r.header.Get("RateLimit-Remaining"))
	}
	page := decode[listView](t, s.get(listPath(projA, "?limit=100"), s.adminA))
	if len(page.Jobs) != 100 || page.NextCursor != nil {
		t.Errorf("%s has %d jobs (next %s), want exactly 100", projA, len(page.Jobs), str(page.NextCursor))
	}

	// The limit survives a restart.
	s.restart()
	check429("create after restart", s.post(jobsPath(projA), s.adminA, prompt("after restart")))
	r = s.post(jobsPath(projA2), s.adminA, prompt("after restart"))
	expectStatus(t, r, http.StatusCreated)
	if r.header.Get("RateLimit-Remaining") != "98" {
		t.Errorf("%s after restart: RateLimit-Remaining %q, want 98", projA2, r.header.Get("RateLimit-Remaining"))
	}
}
