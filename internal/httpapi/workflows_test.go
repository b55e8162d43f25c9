package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
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
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// fakeWorkflows stands in for workflowrun.Service: it answers from what a
// test put in it and records what the handlers passed.
type fakeWorkflows struct {
	mu      sync.Mutex
	listing workflowrun.Listing
	// active makes a run queue on the workflow's active run.
	active bool
	// runs are the jobs manual runs made, by workflow and key.
	runs     map[string]agentjob.Job
	created  int
	webhook  func(p tenant.Project, h http.Header, body []byte) (workflowrun.WebhookResult, error)
	bodies   [][]byte
	projects []string
}

func (f *fakeWorkflows) List(_ context.Context, p tenant.Project) (workflowrun.Listing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects = append(f.projects, p.ID)
	return f.listing, nil
}

func (f *fakeWorkflows) Sync(ctx context.Context, p tenant.Project) (workflowrun.Listing, error) {
	return f.List(ctx, p)
}

func (f *fakeWorkflows) ReplayManual(_ context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == "" {
		return agentjob.Job{}, false, nil
	}
	job, ok := f.runs[p.ID+"/"+workflowID+"/"+key]
	return job, ok, nil
}

func (f *fakeWorkflows) RunManual(_ context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, agentjob.RunStart, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if job, ok := f.runs[p.ID+"/"+workflowID+"/"+key]; ok && key != "" {
		return job, agentjob.RunReplayed, nil
	}
	if workflowID == "capped" {
		return agentjob.Job{}, "", apperr.New(apperr.RateLimited, "workflow %q reached its daily cap of 50 runs", workflowID)
	}
	f.created++
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	job := agentjob.Job{ID: "job-" + workflowID, ProjectID: p.ID, Status: agentjob.Active, Repository: p.RepoURL, Branch: "docsmith/x", BaseRef: "main",
		Model: "builtin", CreatedAt: t0, UpdatedAt: t0, Trigger: agentjob.TriggerManual, Workflow: workflowID,
		Messages: []agentjob.Message{{Seq: 1, Prompt: "Do it", State: agentjob.TurnQueued, CreatedAt: t0}}}
	start := agentjob.RunCreated
	if f.active {
		start = agentjob.RunQueued
		job.Messages = append(job.Messages, agentjob.Message{Seq: 2, Prompt: "Do it", State: agentjob.TurnQueued, CreatedAt: t0})
	}
	if key != "" {
		f.runs[p.ID+"/"+workflowID+"/"+key] = job
	}
	return job, start, nil
}

func (f *fakeWorkflows) Webhook(_ context.Context, p tenant.Project, h http.Header, body io.Reader) (workflowrun.WebhookResult, error) {
	b, err := io.ReadAll(body)
	var over *http.MaxBytesError
	if errors.As(err, &over) {
		// As the service answers a body over the cap once a token
		// verified the delivery.
		return workflowrun.WebhookResult{}, apperr.Wrap(err, apperr.TooLarge, "%v", workflow.ErrTooLarge)
	}
	if err != nil {
		return workflowrun.WebhookResult{}, err
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, b)
	f.projects = append(f.projects, p.ID)
	hook := f.webhook
	f.mu.Unlock()
	return hook(p, h, b)
}

// syncBuffer is a log destination the server's goroutines share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// workflowServer is a real Server over SQLite with the fake workflow
// service: acme owns the project "docs", globex "globex-docs".
type workflowServer struct {
	t         *testing.T
	url       string
	fake      *fakeWorkflows
	log       *syncBuffer
	admin     string // acme's admin key
	assistant string // acme's assistant key
	globexAdm string
}

func newWorkflowServer(t *testing.T, limits Limits, withService bool) *workflowServer {
	t.Helper()
	return newWorkflowServerWith(t, limits, withService, func(*Deps) {})
}

// newWorkflowServerWith is newWorkflowServer with its Deps edited first.
func newWorkflowServerWith(t *testing.T, limits Limits, withService bool, edit func(*Deps)) *workflowServer {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	tenants := tenant.NewService(store, now)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(org string, kind apikey.Kind) string {
		_, secret, err := tenants.CreateKey(ctx, org, kind, "test")
		check(err)
		return secret
	}
	for org, project := range map[string]string{"acme": "docs", "globex": "globex-docs"} {
		_, err := tenants.CreateOrg(ctx, org)
		check(err)
		_, err = tenants.CreateProject(ctx, tenant.Project{ID: project, OrgID: org, RepoURL: "https://git.example/" + org + "/docs.git"})
		check(err)
	}
	s := &workflowServer{t: t, fake: &fakeWorkflows{runs: map[string]agentjob.Job{}}, log: &syncBuffer{}}
	s.admin, s.assistant, s.globexAdm = key("acme", apikey.Admin), key("acme", apikey.Assistant), key("globex", apikey.Admin)
	deps := Deps{
		Tenants:      tenants,
		Limiter:      ratelimit.New(store, now),
		Limits:       limits,
		Log:          slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Ready:        store.Ping,
		MaxBodyBytes: 64 << 10,
	}
	if withService {
		deps.Workflows = s.fake
	}
	edit(&deps)
	ts := httptest.NewServer(New(deps).Handler())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

func (s *workflowServer) do(method, path, key string, body io.Reader, header ...string) response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.url+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := matchesOpenAPI(req, resp, b); err != nil {
		s.t.Errorf("%s %s -> %d does not match openapi.json: %v\nbody: %s", method, path, resp.StatusCode, err, b)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // the test servers listen on random ports
	return gorillamux.NewRouter(doc)
})

// matchesOpenAPI checks a response of a route of the document against it:
// its status is declared, and its headers and body match. The app's
// end-to-end suite checks the fallbacks (404, 405).
func matchesOpenAPI(req *http.Request, resp *http.Response, body []byte) error {
	router, err := openAPIRouter()
	if err != nil {
		return fmt.Errorf("load openapi.json: %w", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return nil //nolint:nilerr // a route openapi.json does not describe is the route table test's to catch
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

const githubSignature = "sha256=0badc0ffee0badc0ffee0badc0ffee0badc0ffee0badc0ffee0badc0ffee0bad"

// TestWebhookBadSignature checks that a delivery the service refuses for
// its signature is the one refusal, whether or not the service gave the
// error its code, and that the log names the project, the forge headers,
// the client and the reason, never the signature.
func TestWebhookBadSignature(t *testing.T) {
	t.Parallel()
	for name, serviceErr := range map[string]error{
		"coded":   apperr.Wrap(workflowrun.ErrBadSignature, apperr.Unauthorized, "the webhook's signature does not match the project's secret"),
		"uncoded": fmt.Errorf("project docs: %w", workflowrun.ErrBadSignature),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newWorkflowServer(t, Limits{}, true)
			s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
				return workflowrun.WebhookResult{}, serviceErr
			}
			r := s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader(`{"ref":"refs/heads/main"}`),
				"Content-Type", "application/json", "X-GitHub-Event", "push", "X-GitHub-Delivery", "d-1", "X-Hub-Signature-256", githubSignature)
			if r.status != http.StatusUnauthorized || r.errorMessage(t) != errWebhookRefused.Message {
				t.Fatalf("bad signature: %d %s", r.status, r.body)
			}
			warn := s.webhookWarning(r.header.Get("X-Request-Id"))
			for _, want := range []string{"project=docs", "X-GitHub-Event", "X-Hub-Signature-256", "remote=127.0.0.1", "verification failed"} {
				if !strings.Contains(warn, want) {
					t.Errorf("the warning %q lacks %q", warn, want)
				}
			}
			if logged := s.log.String(); strings.Contains(logged, githubSignature) || strings.Contains(logged, "0badc0ffee") {
				t.Errorf("the log holds the signature:\n%s", logged)
			}
		})
	}
}

// webhookWarning is the log's warning about the refused webhook of the
// request id, or "".
func (s *workflowServer) webhookWarning(requestID string) string {
	for _, line := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "webhook refused") && strings.Contains(line, "request_id="+requestID) {
			return line
		}
	}
	return ""
}

// TestWebhookRefusalsLookTheSame checks that whoever sends a webhook that
// is not verified cannot tell an unknown project from a known one, nor a
// project without a secret from a wrong signature: the same status and
// body every time, naming no secret's variable or file, and the reason
// only in the log under the request id.
func TestWebhookRefusalsLookTheSame(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	s.fake.webhook = func(p tenant.Project, h http.Header, _ []byte) (workflowrun.WebhookResult, error) {
		if h.Get("X-Hub-Signature-256") == "" {
			// As the service refuses a project that names an unset
			// variable: the message is for the log.
			return workflowrun.WebhookResult{}, &apperr.Error{Code: apperr.Unauthorized,
				Message: "project docs has no webhook secret (the variable DOCS_HOOK_SECRET it names is not set)",
				Cause:   fmt.Errorf("%w: %w", workflowrun.ErrBadSignature, workflow.ErrNoSecret)}
		}
		return workflowrun.WebhookResult{}, fmt.Errorf("%w: %w", workflow.ErrUnverified, workflow.ErrSignature)
	}
	signed := []string{"X-GitHub-Event", "push", "X-GitHub-Delivery", "d-1", "X-Hub-Signature-256", githubSignature}
	tests := []struct {
		name, path string
		header     []string
		logged     string
	}{
		{"unknown project", "/v2/hooks/nope", signed, "project=nope"},
		{"bad signature", "/v2/hooks/docs", signed, "does not match"},
		{"no secret", "/v2/hooks/docs", []string{"X-GitHub-Event", "push", "X-GitHub-Delivery", "d-1"}, "DOCS_HOOK_SECRET"},
	}
	var first response
	for i, tc := range tests {
		r := s.do(http.MethodPost, tc.path, "", strings.NewReader(`{"ref":"refs/heads/main"}`), tc.header...)
		if i == 0 {
			first = r
		}
		if r.status != http.StatusUnauthorized || r.body != first.body {
			t.Errorf("%s: %d %s, want %d %s as for %s", tc.name, r.status, r.body, first.status, first.body, tests[0].name)
		}
		if strings.Contains(r.body, "DOCS_HOOK_SECRET") || strings.Contains(r.body, "secret-env") {
			t.Errorf("%s: the answer names where the secret is: %s", tc.name, r.body)
		}
		if warn := s.webhookWarning(r.header.Get("X-Request-Id")); !strings.Contains(warn, tc.logged) {
			t.Errorf("%s: the warning %q lacks %q", tc.name, warn, tc.logged)
		}
	}
	s.fake.mu.Lock()
	defer s.fake.mu.Unlock()
	if slices.Contains(s.fake.projects, "nope") {
		t.Errorf("the service was called for an unknown project")
	}
}

// TestWebhookBusy checks that past WebhookReads deliveries at once the
// next is answered 503 with Retry-After at once, without its body being
// read, and that the slot is free again once the others end.
func TestWebhookBusy(t *testing.T) {
	t.Parallel()
	s := newWorkflowServerWith(t, Limits{}, true, func(d *Deps) { d.WebhookReads = 1 })
	entered, release := make(chan struct{}), make(chan struct{})
	s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		return workflowrun.WebhookResult{Forge: "github", Delivery: "d"}, nil
	}
	held := make(chan response, 1)
	go func() { held <- s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader("{}")) }()
	<-entered
	r := s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader("{}"))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.errorMessage(t), "retry") {
		t.Fatalf("a delivery past the limit: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	s.fake.mu.Lock()
	called := len(s.fake.bodies)
	s.fake.mu.Unlock()
	if called != 1 {
		t.Fatalf("the service read %d bodies, want only the first delivery's", called)
	}
	close(release)
	if r := <-held; r.status != http.StatusOK {
		t.Fatalf("the delivery in progress: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader("{}")); r.status != http.StatusOK {
		t.Fatalf("a delivery after the others ended: %d %s", r.status, r.body)
	}
}

// TestWebhookBodyCap checks the webhook's own body cap: larger than the
// JSON limit, any content type, and 413 past it whether the size was
// announced or not.
func TestWebhookBodyCap(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	s.fake.webhook = func(_ tenant.Project, _ http.Header, body []byte) (workflowrun.WebhookResult, error) {
		return workflowrun.WebhookResult{Forge: "github", Delivery: "d"}, nil
	}
	// At the cap, far over the 64 KiB JSON limit: read whole. A form
	// body goes through as it is (the service refuses it with a message).
	full := bytes.Repeat([]byte("a"), workflow.MaxWebhookBytes)
	if r := s.do(http.MethodPost, "/v2/hooks/docs", "", bytes.NewReader(full), "Content-Type", "application/x-www-form-urlencoded"); r.status != http.StatusOK {
		t.Fatalf("a body at the cap: %d %s", r.status, r.body)
	}
	if got := s.fake.bodies; len(got) != 1 || !bytes.Equal(got[0], full) {
		t.Fatalf("the service got %d bodies, not the body sent", len(got))
	}
	over := append(full, 'a')
	if r := s.do(http.MethodPost, "/v2/hooks/docs", "", bytes.NewReader(over)); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.errorMessage(t), "5242880 bytes") {
		t.Fatalf("a body over the cap: %d %s", r.status, r.body)
	}
	// Without Content-Length (chunked), the cap holds as the body is read.
	if r := s.do(http.MethodPost, "/v2/hooks/docs", "", io.MultiReader(bytes.NewReader(over))); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a chunked body over the cap: %d %s", r.status, r.body)
	}
	if len(s.fake.bodies) != 1 {
		t.Fatalf("the service was called for a body over the cap")
	}
}

// TestWebhookErrorsOfTheService checks that the service's other errors
// keep their statuses, and that webhook errors it left uncoded get theirs.
func TestWebhookErrorsOfTheService(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	tests := []struct {
		err    error
		status int
		want   string
	}{
		{apperr.New(apperr.Invalid, "webhook payload is not a valid push event: the body is form-encoded; set the webhook's content type to application/json"), 400, "content type to application/json"},
		{fmt.Errorf("%w: trailing data after the JSON object", workflow.ErrPayload), 400, "trailing data"},
		{fmt.Errorf("%w: %w: no X-GitHub-Delivery", workflow.ErrUnverified, workflow.ErrMissingHeader), 401, errWebhookRefused.Message},
		{fmt.Errorf("%w: %w", workflow.ErrUnverified, workflow.ErrUnknownForge), 401, errWebhookRefused.Message},
		{workflow.ErrTooLarge, 413, "larger than"},
		{errors.New("database is locked"), 500, "internal error"},
	}
	for _, tc := range tests {
		s.fake.mu.Lock()
		s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
			return workflowrun.WebhookResult{}, tc.err
		}
		s.fake.mu.Unlock()
		r := s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader("payload=%7B%7D"), "Content-Type", "application/x-www-form-urlencoded")
		if r.status != tc.status || !strings.Contains(r.errorMessage(t), tc.want) {
			t.Errorf("%v: %d %s, want %d with %q", tc.err, r.status, r.body, tc.status, tc.want)
		}
	}
}

// TestWebhookAnswer checks the success JSON: every field present, the
// optional ones null when empty, camelCase like the rest of the API.
func TestWebhookAnswer(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	var gotHeader http.Header
	s.fake.webhook = func(p tenant.Project, h http.Header, _ []byte) (workflowrun.WebhookResult, error) {
		gotHeader = h
		return workflowrun.WebhookResult{Forge: "gitlab", Delivery: "uuid-1", Synced: true, Runs: []workflowrun.RunResult{
			{Workflow: "api-docs", JobID: "job-1", Start: agentjob.RunCreated},
			{Workflow: "changelog", JobID: "job-2", Start: agentjob.RunQueued},
			{Workflow: "merge-it", Refused: "automerge is not allowed for project docs"},
		}}, nil
	}
	r := s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader(`{"object_kind":"push"}`), "X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", "s3cret")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	if gotHeader.Get("X-Gitlab-Token") != "s3cret" {
		t.Errorf("the service did not get the request's headers")
	}
	got := decodeObject(t, r.body)
	if keys := keysOf(got); !slices.Equal(keys, []string{"delivery", "forge", "ignored", "pullRequest", "reindexed", "replayed", "runs", "synced"}) {
		t.Fatalf("keys %v", keys)
	}
	want := `{"forge":"gitlab","delivery":"uuid-1","replayed":false,"ignored":null,"synced":true,"runs":[` +
		`{"workflow":"api-docs","jobId":"job-1","start":"created","refused":null},` +
		`{"workflow":"changelog","jobId":"job-2","start":"queued","refused":null},` +
		`{"workflow":"merge-it","jobId":null,"start":null,"refused":"automerge is not allowed for project docs"}],"reindexed":[],"pullRequest":null}`
	if strings.TrimSpace(r.body) != want {
		t.Errorf("body\n%s\nwant\n%s", r.body, want)
	}

	// A delivery that starts nothing still lists its runs, as [].
	s.fake.mu.Lock()
	s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
		return workflowrun.WebhookResult{Forge: "github", Delivery: "d-2", Replayed: true, Ignored: `event "ping" is not a push`}, nil
	}
	s.fake.mu.Unlock()
	r = s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader(`{}`))
	want = `{"forge":"github","delivery":"d-2","replayed":true,"ignored":"event \"ping\" is not a push","synced":false,"runs":[],"reindexed":[],"pullRequest":null}`
	if r.status != http.StatusOK || strings.TrimSpace(r.body) != want {
		t.Errorf("replayed delivery: %d %s", r.status, r.body)
	}

	// A pull request event says which head it queued for its checks.
	s.fake.mu.Lock()
	s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
		return workflowrun.WebhookResult{Forge: "gitea", Delivery: "d-3", PullRequest: &workflowrun.PullRequestResult{
			Number: 3, Head: strings.Repeat("a", 40), Fork: true, Queued: true, Domains: []string{"docs.acme.test"}}}, nil
	}
	s.fake.mu.Unlock()
	r = s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader(`{}`))
	want = `{"forge":"gitea","delivery":"d-3","replayed":false,"ignored":null,"synced":false,"runs":[],"reindexed":[],` +
		`"pullRequest":{"number":3,"head":"` + strings.Repeat("a", 40) + `","fork":true,"queued":true,"domains":["docs.acme.test"]}}`
	if r.status != http.StatusOK || strings.TrimSpace(r.body) != want {
		t.Errorf("pull request delivery: %d %s", r.status, r.body)
	}
}

// TestWorkflowEndpointsUnavailable checks the answer of a server built
// without the workflow service.
func TestWorkflowEndpointsUnavailable(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, false)
	for _, c := range []struct{ method, path, key string }{
		{http.MethodPost, "/v2/hooks/docs", ""},
		{http.MethodGet, "/v2/agent/docs/workflows", s.admin},
		{http.MethodPost, "/v2/agent/docs/workflows/sync", s.admin},
		{http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin},
	} {
		if r := s.do(c.method, c.path, c.key, nil); r.status != http.StatusServiceUnavailable || !strings.Contains(r.errorMessage(t), "workflows are not available") {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
}

// TestWorkflowEndpointsAuth checks that the workflow endpoints need an
// admin key of the project's organization, as the job endpoints do.
func TestWorkflowEndpointsAuth(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	for _, path := range []string{"/v2/agent/docs/workflows", "/v2/agent/docs/workflows/sync", "/v2/agent/docs/workflows/weekly/run"} {
		method := http.MethodPost
		if strings.HasSuffix(path, "/workflows") {
			method = http.MethodGet
		}
		for _, c := range []struct {
			name, key, path string
			status          int
			message         string
		}{
			{"no key", "", path, 401, "Authorization header is missing"},
			{"assistant key", s.assistant, path, 403, "admin key"},
			{"another organization's project", s.globexAdm, path, 404, `project "docs" not found`},
			{"unknown project", s.admin, strings.Replace(path, "/docs/", "/nope/", 1), 404, `project "nope" not found`},
		} {
			if r := s.do(method, c.path, c.key, nil); r.status != c.status || !strings.Contains(r.errorMessage(t), c.message) {
				t.Errorf("%s %s (%s): %d %s, want %d with %q", method, c.path, c.name, r.status, r.body, c.status, c.message)
			}
		}
	}
	if len(s.fake.projects) != 0 {
		t.Errorf("the service was called for %v", s.fake.projects)
	}
	if r := s.do(http.MethodDelete, "/v2/agent/docs/workflows", s.admin, nil); r.status != 405 || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE workflows: %d %v", r.status, r.header)
	}
}

// TestWorkflowListJSON checks the listing's shape, for a project never
// synced and for one with a scheduled workflow, a push workflow and a
// file left out.
func TestWorkflowListJSON(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	r := s.do(http.MethodGet, "/v2/agent/docs/workflows", s.admin, nil)
	want := `{"baseSha":null,"syncedAt":null,"workflows":[],"problems":[]}`
	if r.status != http.StatusOK || strings.TrimSpace(r.body) != want {
		t.Fatalf("never synced: %d %s", r.status, r.body)
	}

	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	next := t0.Add(7 * 24 * time.Hour)
	s.fake.mu.Lock()
	s.fake.listing = workflowrun.Listing{
		SyncState: workflowrun.SyncState{BaseSHA: "0123456789abcdef0123456789abcdef01234567", SyncedAt: t0.Add(time.Minute), Problems: []workflow.Problem{
			{File: ".mintlify/workflows/bad.md", Line: 3, Key: "on.cron", Msg: "has 4 fields; a cron expression has 5"},
			{File: ".mintlify/workflows/empty.md", Msg: "is not valid UTF-8"},
		}},
		Workflows: []workflowrun.Entry{
			{Workflow: workflow.Workflow{ID: "from-api", Path: ".docsmith/workflows/from-api.md", Overrides: ".mintlify/workflows/from-api.md", Name: "Docs from the API",
				Push: []workflow.PushTrigger{{Repo: "acme/api", Branch: "main"}, {Repo: "acme/sdk"}}, Context: []string{"acme/api"}, Instruction: "Update the reference."},
				FirstSeen: t0},
			{Workflow: workflow.Workflow{ID: "weekly", Path: ".mintlify/workflows/weekly.md", Name: "Weekly", Cron: "0 9 * * 1", Automerge: true, Instruction: "Fix typos."},
				FirstSeen: t0, LastSlot: t0, NextRun: &next, Refused: "automerge is not allowed for project docs"},
		},
	}
	s.fake.mu.Unlock()
	for _, c := range []struct{ method, path string }{{http.MethodGet, "/v2/agent/docs/workflows"}, {http.MethodPost, "/v2/agent/docs/workflows/sync"}} {
		r = s.do(c.method, c.path, s.admin, nil)
		want = `{"baseSha":"0123456789abcdef0123456789abcdef01234567","syncedAt":"2026-03-02T09:01:00.000Z","workflows":[` +
			`{"id":"from-api","name":"Docs from the API","path":".docsmith/workflows/from-api.md","overrides":".mintlify/workflows/from-api.md",` +
			`"trigger":{"push":[{"repo":"acme/api","branch":"main"},{"repo":"acme/sdk","branch":null}]},"context":["acme/api"],"automerge":false,` +
			`"instruction":"Update the reference.","firstSeen":"2026-03-02T09:00:00.000Z","lastRunSlot":null,"nextRun":null,"refused":null},` +
			`{"id":"weekly","name":"Weekly","path":".mintlify/workflows/weekly.md","overrides":null,"trigger":{"cron":"0 9 * * 1"},"context":[],` +
			`"automerge":true,"instruction":"Fix typos.","firstSeen":"2026-03-02T09:00:00.000Z","lastRunSlot":"2026-03-02T09:00:00.000Z",` +
			`"nextRun":"2026-03-09T09:00:00.000Z","refused":"automerge is not allowed for project docs"}],` +
			`"problems":[{"file":".mintlify/workflows/bad.md","line":3,"key":"on.cron","message":"has 4 fields; a cron expression has 5"},` +
			`{"file":".mintlify/workflows/empty.md","line":null,"key":null,"message":"is not valid UTF-8"}]}`
		if r.status != http.StatusOK || strings.TrimSpace(r.body) != want {
			t.Errorf("%s %s: %d\n%s\nwant\n%s", c.method, c.path, r.status, r.body, want)
		}
	}
}

// TestRunWorkflow checks a manual run: 201 for a new job, 200 for a run
// queued on the workflow's active run, 404 for an unknown workflow, and
// the service's refusals through the one status table.
func TestRunWorkflow(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	s.fake.listing = workflowrun.Listing{Workflows: []workflowrun.Entry{
		{Workflow: workflow.Workflow{ID: "weekly"}}, {Workflow: workflow.Workflow{ID: "capped"}},
	}}
	r := s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	job := decodeObject(t, r.body)
	if string(job["trigger"]) != `"manual"` || string(job["workflow"]) != `"weekly"` || string(job["id"]) != `"job-weekly"` {
		t.Errorf("job %s", r.body)
	}
	s.fake.mu.Lock()
	s.fake.active = true
	s.fake.mu.Unlock()
	r = s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil)
	if r.status != http.StatusOK || len(decodeObject(t, r.body)["messages"]) == 0 {
		t.Fatalf("run queued on the active run: %d %s", r.status, r.body)
	}
	r = s.do(http.MethodPost, "/v2/agent/docs/workflows/nope/run", s.admin, nil)
	if r.status != http.StatusNotFound || !strings.Contains(r.errorMessage(t), `workflow "nope" not found in project "docs"`) {
		t.Fatalf("unknown workflow: %d %s", r.status, r.body)
	}
	r = s.do(http.MethodPost, "/v2/agent/docs/workflows/capped/run", s.admin, nil)
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.errorMessage(t), "daily cap") {
		t.Fatalf("capped workflow: %d %s", r.status, r.body)
	}
}

// TestRunWorkflowIdempotencyKey checks the Idempotency-Key of a manual
// run: validated like a job create's, and a retry answers the first run's
// job with 200, starting nothing.
func TestRunWorkflowIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{}, true)
	s.fake.listing = workflowrun.Listing{Workflows: []workflowrun.Entry{{Workflow: workflow.Workflow{ID: "weekly"}}}}
	for _, bad := range []string{"has space", strings.Repeat("k", 256)} {
		r := s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil, "Idempotency-Key", bad)
		if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "Idempotency-Key") {
			t.Errorf("key %q: %d %s", bad, r.status, r.body)
		}
	}
	first := s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil, "Idempotency-Key", "run-1")
	again := s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil, "Idempotency-Key", "run-1")
	if first.status != http.StatusCreated || again.status != http.StatusOK || first.body != again.body {
		t.Fatalf("first %d %s\nagain %d %s", first.status, first.body, again.status, again.body)
	}
	if s.fake.created != 1 {
		t.Fatalf("%d runs started, want 1", s.fake.created)
	}
}

// TestRunWorkflowRateLimit checks that manual runs count against the
// project's agent limit like job creates: refusals (unknown workflow, bad
// key) and retries are not counted, and over the limit is a 429 with the
// limit's headers.
func TestRunWorkflowRateLimit(t *testing.T) {
	t.Parallel()
	s := newWorkflowServer(t, Limits{AgentPerProjectHour: 2}, true)
	s.fake.listing = workflowrun.Listing{Workflows: []workflowrun.Entry{{Workflow: workflow.Workflow{ID: "weekly"}}}}
	run := func(key string) response {
		if key == "" {
			return s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil)
		}
		return s.do(http.MethodPost, "/v2/agent/docs/workflows/weekly/run", s.admin, nil, "Idempotency-Key", key)
	}
	for range 3 {
		if r := s.do(http.MethodPost, "/v2/agent/docs/workflows/nope/run", s.admin, nil); r.status != http.StatusNotFound {
			t.Fatalf("unknown workflow: %d", r.status)
		}
		if r := run("bad key"); r.status != http.StatusBadRequest {
			t.Fatalf("bad key: %d", r.status)
		}
	}
	r := run("k1")
	if r.status != http.StatusCreated || r.header.Get("RateLimit-Limit") != "2" || r.header.Get("RateLimit-Remaining") != "1" {
		t.Fatalf("first run: %d %v", r.status, r.header)
	}
	for range 3 {
		if r := run("k1"); r.status != http.StatusOK {
			t.Fatalf("retry: %d %s", r.status, r.body)
		}
	}
	if r := run(""); r.status != http.StatusCreated || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("second run: %d %v", r.status, r.header)
	}
	r = run("")
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.errorMessage(t), "agent requests per project") {
		t.Fatalf("third run: %d %s", r.status, r.body)
	}
	for _, h := range []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("429 without %s", h)
		}
	}
	// A retry of a run that started is answered over the limit too.
	if r := run("k1"); r.status != http.StatusOK {
		t.Fatalf("retry over the limit: %d %s", r.status, r.body)
	}
	if s.fake.created != 2 {
		t.Fatalf("%d runs started, want 2", s.fake.created)
	}
}
