// Package dashboard is the web UI at /ui: server-rendered pages over the
// same services as the API (agent jobs, analytics, tenants), signed in with
// an admin key into a server-side session, every form CSRF-checked, every
// page authorized like the API (another organization's project is 404).
package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
	"github.com/docsmith/docsmith/internal/websession"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Deps is what the dashboard needs.
type Deps struct {
	Tenants   *tenant.Service
	Jobs      *agentjob.Service
	Analytics *analytics.Service
	Sessions  *websession.Manager
	Log       *slog.Logger
	Now       func() time.Time
	// TrustedProxies may say, by X-Forwarded-Proto, that the browser came
	// over TLS, so the cookie is Secure.
	TrustedProxies []netip.Prefix
	// PublicURL is where browsers reach this server, for the widget
	// snippet; empty uses the request's host.
	PublicURL string
	// EventPoll is how often a job timeline looks for events of other
	// processes.
	EventPoll time.Duration
	// Spend reads each domain's model spend today against its budget, for
	// the settings page; nil leaves it out.
	Spend SpendReader
	// IndexStatus reads what is known of each domain's search index, for
	// the settings page; nil leaves it out.
	IndexStatus IndexStatusReader
	// TrafficChecks keeps the answer checks found in the domains'
	// traffic, for the checks page; nil leaves them out.
	TrafficChecks *trafficcheck.Service
	// CheckRuns reads the stored runs of answer checks, for the checks
	// page and the regression notice of a domain's pages; nil shows none.
	CheckRuns CheckRunReader
	// Catalog reads a domain's pages, to name the navigation group of a
	// page drafted for the builtin model; nil leaves the group to write.
	Catalog CatalogReader
}

// CatalogReader reads a domain's indexed pages (assistant.Service).
type CatalogReader interface {
	Catalog(ctx context.Context, d tenant.Domain) (search.SiteCatalog, error)
}

// IndexStatusReader reads a domain's index state (freshness.Service).
type IndexStatusReader interface {
	Status(ctx context.Context, domain string) (freshness.Status, error)
}

// SpendReader reads a domain's model spend of the current day.
type SpendReader interface {
	DaySpend(ctx context.Context, d tenant.Domain) (assistant.DaySpend, error)
}

// Handler serves /ui/.
type Handler struct {
	Deps
	pages map[string]*template.Template
	mux   *http.ServeMux
	// stopStreams is closed when the server shuts down: live job timelines
	// end then rather than hold the shutdown up.
	stopStreams chan struct{}
	stopOnce    sync.Once
}

// StopStreams ends every live job timeline; the server calls it when it
// begins to shut down.
func (h *Handler) StopStreams() {
	h.stopOnce.Do(func() { close(h.stopStreams) })
}

// Cookie names.
const (
	sessionCookie = "docsmith_session"
	loginCookie   = "docsmith_login" // the login form's CSRF token, before a session exists
)

// New returns the dashboard handler.
func New(d Deps) (*Handler, error) {
	if d.EventPoll == 0 {
		d.EventPoll = time.Second
	}
	h := &Handler{Deps: d, pages: map[string]*template.Template{}, stopStreams: make(chan struct{})}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", n, err)
		}
		h.pages[base] = t
	}
	h.mux = h.routes()
	return h, nil
}

// routes is every page and action of the dashboard on one screen.
func (h *Handler) routes() *http.ServeMux {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static") // the embedded directory exists
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", staticHandler(http.FileServerFS(static))))

	m.HandleFunc("GET /ui/{$}", h.page(h.home))
	m.HandleFunc("GET /ui/login", h.loginPage)
	m.HandleFunc("POST /ui/login", h.login)
	m.HandleFunc("POST /ui/login-links", h.loginLink)
	m.HandleFunc("POST /ui/logout", h.action(h.logout))
	m.HandleFunc("POST /ui/logout-everywhere", h.action(h.logoutEverywhere))

	m.HandleFunc("GET /ui/projects/{projectId}/jobs", h.page(h.jobsPage))
	m.HandleFunc("POST /ui/projects/{projectId}/jobs", h.action(h.createJob))
	m.HandleFunc("GET /ui/projects/{projectId}/jobs/{id}", h.page(h.jobPage))
	m.HandleFunc("GET /ui/projects/{projectId}/jobs/{id}/events", h.page(h.jobEvents))
	m.HandleFunc("POST /ui/projects/{projectId}/jobs/{id}/message", h.action(h.messageJob))
	m.HandleFunc("POST /ui/projects/{projectId}/jobs/{id}/cancel", h.action(h.cancelJob))
	m.HandleFunc("POST /ui/projects/{projectId}/jobs/{id}/archive", h.action(h.archiveJob))

	m.HandleFunc("GET /ui/domains/{domain}/conversations", h.page(h.conversationsPage))
	m.HandleFunc("GET /ui/domains/{domain}/conversations/{threadId}", h.page(h.transcriptPage))
	m.HandleFunc("GET /ui/domains/{domain}/insights", h.page(h.insightsPage))
	m.HandleFunc("GET /ui/domains/{domain}/gaps", h.page(h.gapsPage))
	m.HandleFunc("GET /ui/domains/{domain}/feedback", h.page(h.feedbackPage))
	m.HandleFunc("GET /ui/domains/{domain}/export.csv", h.page(h.exportCSV))
	m.HandleFunc("GET /ui/domains/{domain}/checks", h.page(h.checksPage))
	m.HandleFunc("GET /ui/domains/{domain}/checks/runs/{runId}", h.page(h.checkRunPage))
	m.HandleFunc("POST /ui/domains/{domain}/checks/{id}/pin", h.action(h.pinCheck))
	m.HandleFunc("POST /ui/domains/{domain}/checks/{id}/drop", h.action(h.dropCheck))
	m.HandleFunc("POST /ui/domains/{domain}/checks/{id}/edit", h.action(h.editCheck))

	m.HandleFunc("GET /ui/settings", h.page(h.settingsPage))
	m.HandleFunc("POST /ui/settings/keys", h.action(h.createKey))
	m.HandleFunc("POST /ui/settings/keys/{keyId}/revoke", h.action(h.revokeKey))

	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, nil, apperr.New(apperr.NotFound, "there is no page at %s", r.URL.Path))
	})
	return m
}

// contentSecurityPolicy allows only this server's own styles and scripts:
// no inline script, no third party, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers of every answer and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	// Login links carry a secret in the URL: never send it on.
	hd.Set("Referrer-Policy", "no-referrer")
	if !strings.HasPrefix(r.URL.Path, "/ui/static/") {
		hd.Set("Cache-Control", "no-store")
	}
	h.mux.ServeHTTP(w, r)
}

func staticHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}

// viewer is the signed-in session and what it may see.
type viewer struct {
	session   websession.Session
	principal tenant.Principal
	projects  []tenant.Project
	domains   []tenant.Domain
}

type pageFunc func(w http.ResponseWriter, r *http.Request, v *viewer) error

// page wraps a GET handler: it needs a live session (else to sign-in).
func (h *Handler) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h.viewer(r)
		if err != nil {
			if apperr.Is(err, apperr.Unauthorized) {
				h.clearCookie(w, r, sessionCookie)
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
			h.renderError(w, r, nil, err)
			return
		}
		if err := fn(w, r, v); err != nil {
			h.renderError(w, r, v, err)
		}
	}
}

// action wraps a form POST: a live session and its CSRF token.
func (h *Handler) action(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		v, err := h.viewer(r)
		if err == nil {
			err = websession.CheckCSRF(v.session, r.PostFormValue("csrf"))
		}
		if err == nil {
			err = fn(w, r, v)
		}
		if err != nil {
			if apperr.Is(err, apperr.Unauthorized) {
				h.clearCookie(w, r, sessionCookie)
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
			h.renderError(w, r, v, err)
		}
	}
}

func (h *Handler) viewer(r *http.Request) (*viewer, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, apperr.New(apperr.Unauthorized, "not signed in")
	}
	s, err := h.Sessions.Resolve(r.Context(), c.Value)
	if err != nil {
		return nil, err
	}
	v := &viewer{session: s, principal: tenant.Principal{OrgID: s.OrgID, KeyID: s.KeyID, Kind: apikey.Admin}}
	store := h.Tenants.Store()
	if v.projects, err = store.ListProjects(r.Context(), s.OrgID); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	if v.domains, err = store.ListDomains(r.Context(), s.OrgID); err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return v, nil
}

// secure says whether the browser reached us over TLS, directly or through
// a trusted proxy.
func (h *Handler) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if r.Header.Get("X-Forwarded-Proto") != "https" {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range h.TrustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/ui", MaxAge: int(maxAge.Seconds()),
		HttpOnly: true, Secure: h.secure(r), SameSite: http.SameSiteStrictMode,
	})
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true, Secure: h.secure(r), SameSite: http.SameSiteStrictMode})
}

// flashes are the notices a redirect after an action may show, by code: a
// link cannot make the dashboard show words of its own.
var flashes = map[string]string{
	"key-revoked":    "The key was revoked; its sessions have ended.",
	"check-pinned":   "The check is pinned: newer traffic will not replace it.",
	"check-unpinned": "The check is no longer pinned.",
	"check-dropped":  "The check is dropped: runs no longer ask it, and it will not be found in the traffic again.",
	"check-restored": "The check is back: runs ask it again.",
	"check-saved":    "The check is saved; the next run asks it as written.",
}

// layoutData is what every page's layout reads.
type layoutData struct {
	Title    string
	CSRF     string
	OrgID    string
	Projects []tenant.Project
	Domains  []tenant.Domain
	Section  string // which nav item is current
	Page     any
	Flash    string
	// Alert is the newest scheduled run of the page's domain that found
	// regressions, nil when there is none.
	Alert *regressionAlert
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, v *viewer, status int, name, title, section string, page any) error {
	t, ok := h.pages[name]
	if !ok {
		return fmt.Errorf("no template %s", name)
	}
	d := layoutData{Title: title, Section: section, Page: page, Flash: flashes[r.URL.Query().Get("flash")]}
	if v != nil {
		d.CSRF, d.OrgID, d.Projects, d.Domains = v.session.CSRF, v.session.OrgID, v.projects, v.domains
		d.Alert = h.alertFor(r, section)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", d); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
	return nil
}

var statusOf = map[apperr.Code]int{
	apperr.Invalid:      http.StatusBadRequest,
	apperr.Unauthorized: http.StatusUnauthorized,
	apperr.Forbidden:    http.StatusForbidden,
	apperr.NotFound:     http.StatusNotFound,
	apperr.Conflict:     http.StatusConflict,
	apperr.TooLarge:     http.StatusRequestEntityTooLarge,
	apperr.RateLimited:  http.StatusTooManyRequests,
	apperr.Unavailable:  http.StatusServiceUnavailable,
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = apperr.New(apperr.TooLarge, "the form is larger than %d bytes", mbe.Limit)
	}
	status, ok := statusOf[apperr.CodeOf(err)]
	msg := apperr.MessageOf(err)
	if !ok {
		status, msg = http.StatusInternalServerError, "something went wrong on the server; the log has the details"
		h.Log.ErrorContext(r.Context(), "dashboard request failed", "path", r.URL.Path, "err", err)
	}
	if rerr := h.render(w, r, v, status, "error", http.StatusText(status), "", map[string]any{"Status": status, "Message": msg}); rerr != nil {
		h.Log.ErrorContext(r.Context(), "render error page", "err", rerr)
		http.Error(w, msg, status)
	}
}

// project loads the path's project of the viewer's organization.
func (h *Handler) project(ctx context.Context, v *viewer, id string) (tenant.Project, error) {
	return h.Tenants.ProjectFor(ctx, v.principal, id)
}

// domain loads the path's domain of the viewer's organization.
func (h *Handler) domain(ctx context.Context, v *viewer, id string) (tenant.Domain, error) {
	return h.Tenants.DomainFor(ctx, v.principal, id)
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if len(v.projects) > 0 {
		http.Redirect(w, r, "/ui/projects/"+v.projects[0].ID+"/jobs", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, "/ui/settings", http.StatusSeeOther)
	return nil
}
