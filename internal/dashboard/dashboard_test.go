package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
	"github.com/docsmith/docsmith/internal/websession"
)

// fixture is a dashboard over a real SQLite store with two organizations:
// acme (project acme-docs, domain tern) and globex (globex-docs,
// globex-site), a clock the test moves, and no workers (jobs stay active).
type fixture struct {
	t         *testing.T
	url       string
	store     *sqlite.Store
	tenants   *tenant.Service
	jobs      *agentjob.Service
	clock     atomic.Int64
	acmeKey   string
	acmeKeyID string
	globexKey string
	assistKey string
	handler   *Handler
	checks    *trafficcheck.Service
	runs      *storedRuns
}

func (f *fixture) now() time.Time { return time.Unix(0, f.clock.Load()).UTC() }

func (f *fixture) advance(d time.Duration) { f.clock.Add(int64(d)) }

func newFixture(t *testing.T, tls bool) *fixture {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	f := &fixture{t: t, store: store}
	f.clock.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	f.tenants = tenant.NewService(store, f.now)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, org := range []string{"acme", "globex"} {
		_, err := f.tenants.CreateOrg(ctx, org)
		check(err)
		_, err = f.tenants.CreateProject(ctx, tenant.Project{ID: org + "-docs", OrgID: org, RepoURL: "docs"})
		check(err)
	}
	_, err = f.tenants.CreateDomain(ctx, tenant.Domain{ID: "tern", OrgID: "acme", ProjectID: "acme-docs", AllowedOrigins: []string{"https://tern.example"}})
	check(err)
	_, err = f.tenants.CreateDomain(ctx, tenant.Domain{ID: "globex-site", OrgID: "globex", ProjectID: "globex-docs"})
	check(err)
	k, secret, err := f.tenants.CreateKey(ctx, "acme", apikey.Admin, "ui")
	check(err)
	f.acmeKey, f.acmeKeyID = secret, k.ID
	_, f.globexKey, err = f.tenants.CreateKey(ctx, "globex", apikey.Admin, "ui")
	check(err)
	_, f.assistKey, err = f.tenants.CreateKey(ctx, "acme", apikey.Assistant, "widget")
	check(err)
	f.jobs = agentjob.NewService(store, agentjob.NewHub(), f.now)
	f.checks = trafficcheck.New(trafficcheck.Config{Store: store, Turns: store, Gaps: analytics.NewService(store), Now: f.now})
	f.runs = &storedRuns{}
	h, err := New(Deps{
		Tenants:   f.tenants,
		Jobs:      f.jobs,
		Analytics: analytics.NewService(store),
		Sessions:  websession.NewManager(store, store, f.now),
		Log:       slog.New(slog.DiscardHandler),
		Now:       f.now,
		EventPoll: 20 * time.Millisecond,
		Spend:     assistant.New(assistant.Config{Threads: store, Spend: store, Now: f.now, Budget: assistant.Budget{AnswersPerDay: 2000, TokensPerDay: 2_000_000}}),

		TrafficChecks: f.checks,
		CheckRuns:     f.runs,
	})
	check(err)
	f.handler = h
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	f      *fixture
	client *http.Client
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if strings.HasPrefix(f.url, "https") {
		c.Transport = &http.Transport{TLSClientConfig: insecureTLS()}
	}
	return &browser{f: f, client: c}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.f.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	b.f.t.Helper()
	req, _ := http.NewRequestWithContext(b.f.t.Context(), http.MethodGet, b.f.url+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.f.t.Helper()
	req, _ := http.NewRequestWithContext(b.f.t.Context(), http.MethodPost, b.f.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field in the page (%d):\n%s", p.status, p.body)
	}
	return m[1]
}

func (b *browser) signIn(key string) page {
	b.f.t.Helper()
	login := b.get("/ui/login")
	return b.post("/ui/login", url.Values{"csrf": {csrfOf(b.f.t, login)}, "key": {key}})
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.f.url + "/ui/")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func sessionSetCookie(t *testing.T, p page) *http.Cookie {
	t.Helper()
	for _, line := range p.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err == nil && c.Name == sessionCookie {
			return c
		}
	}
	return nil
}

func TestSignInCookieFlags(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		f := newFixture(t, tls)
		b := f.browser()
		p := b.signIn(f.acmeKey)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
			t.Fatalf("sign-in: %d %s", p.status, p.header.Get("Location"))
		}
		c := sessionSetCookie(t, p)
		if c == nil {
			t.Fatal("no session cookie")
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui" || c.Secure != tls || len(c.Value) < 40 {
			t.Errorf("tls=%v: cookie %+v", tls, c)
		}
		if c.MaxAge <= 0 || time.Duration(c.MaxAge)*time.Second > websession.DefaultAbsolute {
			t.Errorf("cookie max-age %d outlives the session", c.MaxAge)
		}
		// The store keeps the id's hash only.
		if _, err := f.store.GetSession(t.Context(), []byte(c.Value)); err == nil {
			t.Error("the store keeps the raw session id")
		}
		if _, err := f.store.GetSession(t.Context(), websession.Hash(c.Value)); err != nil {
			t.Errorf("the session's hash is not stored: %v", err)
		}
		home := b.get("/ui/")
		if home.status != http.StatusSeeOther || home.header.Get("Location") != "/ui/projects/acme-docs/jobs" {
			t.Errorf("/ui/ signed in: %d %s", home.status, home.header.Get("Location"))
		}
	}
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	cases := []struct {
		name   string
		form   func(csrf string) url.Values
		status int
		says   string
	}{
		{"no csrf", func(string) url.Values { return url.Values{"key": {f.acmeKey}} }, 403, "expired or came from elsewhere"},
		{"wrong csrf", func(string) url.Values { return url.Values{"key": {f.acmeKey}, "csrf": {"x"}} }, 403, "expired or came from elsewhere"},
		{"no key", func(c string) url.Values { return url.Values{"csrf": {c}} }, 400, "paste an admin key"},
		{"wrong key", func(c string) url.Values { return url.Values{"csrf": {c}, "key": {"svc_abc_def"}} }, 401, "not valid"},
		{"assistant key", func(c string) url.Values { return url.Values{"csrf": {c}, "key": {f.assistKey}} }, 403, "needs an admin key"},
		{"used-up link", func(c string) url.Values { return url.Values{"csrf": {c}, "token": {"nope"}} }, 401, "login link is not valid"},
	}
	for _, c := range cases {
		b := f.browser()
		csrf := csrfOf(t, b.get("/ui/login"))
		p := b.post("/ui/login", c.form(csrf))
		if p.status != c.status || !strings.Contains(p.body, c.says) || sessionSetCookie(t, p) != nil {
			t.Errorf("%s: %d, session %v, body lacks %q", c.name, p.status, sessionSetCookie(t, p), c.says)
		}
	}
	// Signed out, every page leads to sign-in.
	b := f.browser()
	for _, path := range []string{"/ui/", "/ui/projects/acme-docs/jobs", "/ui/domains/tern/gaps", "/ui/settings"} {
		if p := b.get(path); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login" {
			t.Errorf("%s signed out: %d %s", path, p.status, p.header.Get("Location"))
		}
	}
	if p := b.post("/ui/projects/acme-docs/jobs", url.Values{"prompt": {"x"}}); p.status != http.StatusSeeOther {
		t.Errorf("POST signed out: %d", p.status)
	}
}

func TestSessionFixation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	// An id planted before sign-in is not adopted.
	u, _ := url.Parse(f.url + "/ui/")
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "planted-by-someone-else", Path: "/ui"}})
	b.signIn(f.acmeKey)
	first := b.cookie(sessionCookie).Value
	if first == "planted-by-someone-else" {
		t.Fatal("sign-in kept the planted id")
	}
	// Signing in again gives a new id and ends the old session.
	b.signIn(f.acmeKey)
	second := b.cookie(sessionCookie).Value
	if second == first {
		t.Fatal("a second sign-in kept the id")
	}
	old := f.browser()
	old.client.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: first, Path: "/ui"}})
	if p := old.get("/ui/settings"); p.status != http.StatusSeeOther {
		t.Errorf("the replaced session still works: %d", p.status)
	}
	if p := b.get("/ui/settings"); p.status != http.StatusOK {
		t.Errorf("the new session does not work: %d", p.status)
	}
}

func TestSessionEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		end  func(t *testing.T, f *fixture, b *browser)
	}{
		{"idle", func(t *testing.T, f *fixture, b *browser) { f.advance(websession.DefaultIdle + time.Second) }},
		{"absolute", func(t *testing.T, f *fixture, b *browser) {
			for f.now().Add(time.Hour).Before(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).Add(websession.DefaultAbsolute)) {
				f.advance(time.Hour)
				if p := b.get("/ui/settings"); p.status != http.StatusOK {
					t.Fatalf("kept busy, the session ended early at %v: %d", f.now(), p.status)
				}
			}
			f.advance(time.Hour)
		}},
		{"revoked key", func(t *testing.T, f *fixture, b *browser) {
			if err := f.store.RevokeKey(context.Background(), "acme", f.acmeKeyID, f.now()); err != nil {
				t.Fatal(err)
			}
		}},
		{"sign out", func(t *testing.T, f *fixture, b *browser) {
			s := b.get("/ui/settings")
			if p := b.post("/ui/logout", url.Values{"csrf": {csrfOf(t, s)}}); p.status != http.StatusSeeOther {
				t.Fatalf("sign out: %d", p.status)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			b := f.browser()
			b.signIn(f.acmeKey)
			id := b.cookie(sessionCookie).Value
			if p := b.get("/ui/settings"); p.status != http.StatusOK {
				t.Fatalf("signed in: %d", p.status)
			}
			c.end(t, f, b)
			replay := f.browser()
			u, _ := url.Parse(f.url + "/ui/")
			replay.client.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: id, Path: "/ui"}})
			if p := replay.get("/ui/settings"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login" {
				t.Errorf("after %s the session still opens pages: %d", c.name, p.status)
			}
		})
	}
}

func TestSignOutEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	phone, laptop := f.browser(), f.browser()
	phone.signIn(f.acmeKey)
	laptop.signIn(f.acmeKey)
	other := f.browser()
	other.signIn(f.globexKey)
	s := laptop.get("/ui/settings")
	if p := laptop.post("/ui/logout-everywhere", url.Values{"csrf": {csrfOf(t, s)}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign out everywhere: %d", p.status)
	}
	for name, b := range map[string]*browser{"phone": phone, "laptop": laptop} {
		if p := b.get("/ui/settings"); p.status != http.StatusSeeOther {
			t.Errorf("%s still signed in: %d", name, p.status)
		}
	}
	if p := other.get("/ui/settings"); p.status != http.StatusOK {
		t.Errorf("another key's session ended too: %d", p.status)
	}
}

func TestCSRFOnEveryForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	b.signIn(f.acmeKey)
	job, _, err := f.jobs.Create(t.Context(), tenant.Project{ID: "acme-docs", RepoURL: "docs", BaseRef: "main", Model: "builtin"}, "first", "")
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]url.Values{
		"/ui/projects/acme-docs/jobs":                        {"prompt": {"a job"}},
		"/ui/projects/acme-docs/jobs/" + job.ID + "/message": {"prompt": {"more"}},
		"/ui/projects/acme-docs/jobs/" + job.ID + "/cancel":  {},
		"/ui/projects/acme-docs/jobs/" + job.ID + "/archive": {},
		"/ui/settings/keys":                                  {"kind": {"admin"}},
		"/ui/settings/keys/" + f.acmeKeyID + "/revoke":       {},
		"/ui/logout":            {},
		"/ui/logout-everywhere": {},
	}
	for path, form := range forms {
		for _, token := range []string{"", "wrong"} {
			if token != "" {
				form.Set("csrf", token)
			}
			if p := b.post(path, form); p.status != http.StatusForbidden || !strings.Contains(p.body, "security token") {
				t.Errorf("POST %s with csrf %q: %d", path, token, p.status)
			}
		}
	}
	// Nothing happened.
	jobs, err := f.jobs.List(t.Context(), "acme-docs", agentjob.ListQuery{Limit: 10})
	if err != nil || len(jobs) != 1 || jobs[0].Status != agentjob.Active || len(jobs[0].Messages) != 1 {
		t.Errorf("jobs after refused forms: %+v, %v", jobs, err)
	}
	if p := b.get("/ui/settings"); p.status != http.StatusOK {
		t.Errorf("still signed in after refused forms: %d", p.status)
	}
}

func TestOtherOrganizationSeesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := t.Context()
	globexJob, _, err := f.jobs.Create(ctx, tenant.Project{ID: "globex-docs", RepoURL: "docs", BaseRef: "main", Model: "builtin"}, "secret globex plan", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.CreateThread(ctx, assistant.Thread{ID: "thr_g", Domain: "globex-site", OrgID: "globex", FP: "a", CreatedAt: f.now(), UpdatedAt: f.now()}); err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signIn(f.acmeKey)
	csrf := csrfOf(t, b.get("/ui/settings"))
	gets := []string{
		"/ui/projects/globex-docs/jobs",
		"/ui/projects/globex-docs/jobs/" + globexJob.ID,
		"/ui/projects/globex-docs/jobs/" + globexJob.ID + "/events",
		"/ui/projects/acme-docs/jobs/" + globexJob.ID,
		"/ui/domains/globex-site/conversations",
		"/ui/domains/globex-site/conversations/thr_g",
		"/ui/domains/tern/conversations/thr_g",
		"/ui/domains/globex-site/insights",
		"/ui/domains/globex-site/gaps",
		"/ui/domains/globex-site/export.csv",
		"/ui/domains/globex-site/feedback",
		"/ui/projects/acme-docs/jobs?domain=globex-site&gap=x",
	}
	for _, path := range gets {
		if p := b.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, "secret globex plan") {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}
	posts := []string{
		"/ui/projects/globex-docs/jobs",
		"/ui/projects/globex-docs/jobs/" + globexJob.ID + "/message",
		"/ui/projects/globex-docs/jobs/" + globexJob.ID + "/cancel",
		"/ui/projects/globex-docs/jobs/" + globexJob.ID + "/archive",
	}
	for _, path := range posts {
		if p := b.post(path, url.Values{"csrf": {csrf}, "prompt": {"take over"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d", path, p.status)
		}
	}
	gk, _ := f.tenants.Store().ListKeys(ctx, "globex")
	if p := b.post("/ui/settings/keys/"+gk[0].ID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
		t.Errorf("revoking another organization's key: %d", p.status)
	}
	job, err := f.jobs.Get(ctx, "globex-docs", globexJob.ID)
	if err != nil || job.Status != agentjob.Active || len(job.Messages) != 1 {
		t.Errorf("globex's job changed: %+v %v", job, err)
	}
	settings := b.get("/ui/settings")
	if strings.Contains(settings.body, "globex") {
		t.Error("acme's settings mention globex")
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	p := b.get("/ui/login")
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if p.header.Get("Cache-Control") != "no-store" || p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers = %v", p.header)
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, " onclick") {
		t.Error("the page has inline script or style, which the CSP blocks")
	}
	css := b.get("/ui/static/app.css")
	if css.status != 200 || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") {
		t.Errorf("app.css: %d %s", css.status, css.header.Get("Content-Type"))
	}
}
