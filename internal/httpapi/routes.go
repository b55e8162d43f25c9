package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/docsmith/docsmith/internal/apperr"
)

// routes is the whole API surface on one screen.
func (s *Server) routes() http.Handler {
	t := newRouteTable()

	t.add("GET /healthz", s.handle(s.healthz))
	t.add("GET /readyz", s.handle(s.readyz))
	t.add("GET /metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	t.add("GET /openapi.json", s.handle(s.openAPI))

	t.add("POST /v2/agent/{projectId}/job", s.handle(s.createJob))
	t.add("GET /v2/agent/{projectId}/job/{id}", s.handle(s.getJob))
	t.add("POST /v2/agent/{projectId}/job/{id}/message", s.handle(s.messageJob))
	t.add("GET /v2/agent/{projectId}/jobs", s.handle(s.listJobs))
	t.add("POST /v2/agent/{projectId}/job/{id}/archive", s.handle(s.archiveJob))
	t.add("POST /v2/agent/{projectId}/job/{id}/cancel", s.handle(s.cancelJob))
	t.add("GET /v2/agent/{projectId}/job/{id}/events", s.handle(s.jobEvents))
	t.add("GET /v2/agent/{projectId}/workflows", s.handle(s.listWorkflows))
	t.add("POST /v2/agent/{projectId}/workflows/sync", s.handle(s.syncWorkflows))
	t.add("POST /v2/agent/{projectId}/workflows/{name}/run", s.handle(s.runWorkflow))
	// Forge webhooks carry no key: the project's webhook secret signs them.
	t.add("POST /v2/hooks/{projectId}", s.handle(s.webhook))
	t.add("GET /v2/domains/{domain}", s.handle(s.getDomain))
	t.add("POST /v2/domains/{domain}/index", s.handle(s.indexDomain))
	t.add("POST /v2/domains/{domain}/checks/run", s.handle(s.runChecks))
	t.add("GET /v2/domains/{domain}/checks/runs", s.handle(s.listCheckRuns))
	t.add("GET /v2/domains/{domain}/checks/runs/{id}", s.handle(s.getCheckRun))

	t.add("GET /v2/analytics/{domain}/conversations", s.handle(s.analyticsConversations))
	t.add("GET /v2/analytics/{domain}/conversations/{threadId}", s.handle(s.analyticsTranscript))
	t.add("GET /v2/analytics/{domain}/insights", s.handle(s.analyticsInsights))
	t.add("GET /v2/analytics/{domain}/gaps", s.handle(s.analyticsGaps))
	t.add("GET /v2/analytics/{domain}/feedback", s.handle(s.analyticsFeedback))

	t.add("POST /discovery/v2/assistant/{domain}/message", s.handle(s.cors(s.assistantMessage(newUIMessageStream))))
	t.add("OPTIONS /discovery/v2/assistant/{domain}/message", s.handle(s.preflight))
	t.add("POST /discovery/v1/assistant/{domain}/message", s.handle(s.cors(s.assistantMessage(newDataStream))))
	t.add("OPTIONS /discovery/v1/assistant/{domain}/message", s.handle(s.preflight))
	t.add("POST /discovery/v1/assistant/{domain}/feedback", s.handle(s.cors(s.assistantFeedback)))
	t.add("OPTIONS /discovery/v1/assistant/{domain}/feedback", s.handle(s.preflight))
	t.add("POST /discovery/v1/search/{domain}", s.handle(s.cors(s.searchDocs)))
	t.add("OPTIONS /discovery/v1/search/{domain}", s.handle(s.preflight))
	t.add("POST /discovery/v1/page/{domain}", s.handle(s.cors(s.pageContent)))
	t.add("OPTIONS /discovery/v1/page/{domain}", s.handle(s.preflight))
	t.add("GET /discovery/v1/page/{domain}/{path...}", s.handle(s.cors(s.pageByPath)))
	t.add("OPTIONS /discovery/v1/page/{domain}/{path...}", s.handle(s.preflightFor("GET, OPTIONS")))
	t.add("GET /discovery/v1/challenge/{domain}", s.handle(s.cors(s.powChallenge)))
	t.add("OPTIONS /discovery/v1/challenge/{domain}", s.handle(s.preflightFor("GET, OPTIONS")))
	t.add("POST /discovery/v1/mcp/{domain}", s.handle(s.mcp))
	t.add("GET /discovery/v1/llms.txt/{domain}", s.handle(s.llmsIndex))
	t.add("GET /discovery/v1/llms-full.txt/{domain}", s.handle(s.llmsFull))

	t.add("GET /widget.js", http.HandlerFunc(s.Widget.Latest))
	t.add("GET /widget/{file}", http.HandlerFunc(s.Widget.Hashed))
	if s.Demo != nil {
		t.add("GET /demo/", s.Demo)
	}

	// The dashboard has its own route table (internal/dashboard) under /ui.
	if s.UI != nil {
		t.mux.Handle("/ui/", s.UI)
		t.mux.Handle("/ui", http.RedirectHandler("/ui/", http.StatusFound))
	}

	return t.finish(s)
}

// routeTable registers method patterns and adds, for each path, a JSON 405
// with an Allow header for the other methods, and a JSON 404 for the rest.
type routeTable struct {
	mux     *http.ServeMux
	methods map[string][]string // path -> methods
	paths   []string
}

func newRouteTable() *routeTable {
	return &routeTable{mux: http.NewServeMux(), methods: make(map[string][]string)}
}

func (t *routeTable) add(pattern string, h http.Handler) {
	method, path, _ := strings.Cut(pattern, " ")
	if _, seen := t.methods[path]; !seen {
		t.paths = append(t.paths, path)
	}
	t.methods[path] = append(t.methods[path], method)
	t.mux.Handle(pattern, h)
}

func (t *routeTable) finish(s *Server) http.Handler {
	for _, path := range t.paths {
		allowed := slices.Clone(t.methods[path])
		if slices.Contains(allowed, http.MethodGet) {
			allowed = append(allowed, http.MethodHead)
		}
		allow := strings.Join(allowed, ", ")
		t.mux.Handle(path, s.handle(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Allow", allow)
			return apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, allow)
		}))
	}
	t.mux.Handle("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.Path == "/" && s.Demo != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			http.Redirect(w, r, "/demo/", http.StatusFound)
			return nil
		}
		return apperr.New(apperr.NotFound, "no endpoint at %s; see /openapi.json for the API", r.URL.Path)
	}))
	return t.mux
}
