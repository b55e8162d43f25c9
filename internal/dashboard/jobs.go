package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Job list sizes. A search by prompt reads at most maxSearchJobs of the
// newest jobs (matching in the page, not in the store, so the job store
// keeps one query).
const (
	jobsPerPage   = 50
	maxSearchJobs = 2000
)

type jobsView struct {
	Project  tenant.Project
	Jobs     []agentjob.Job
	Status   string
	Query    string
	Next     string // query string of the next page
	Searched int    // jobs read for a search
	Capped   bool
	Draft    draftView
	Idem     string // the new-job form's idempotency key
}

// draftView is the new-job form, drafted from a gap when one is named.
type draftView struct {
	Prompt string
	Domain string
	Gap    string
	Gapped *analytics.Gap
	// From and To are the range the gap was found over, for the link.
	From, To string
	// Model is the project's agent model; Builtin says the draft is a
	// builtin command (a page for a writer to fill in), not an instruction
	// to write, and NoGroup that no navigation group was found for it.
	Model   string
	Builtin bool
	NoGroup bool
}

func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, err := h.project(ctx, v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	view := jobsView{Project: p, Status: q.Get("status"), Query: strings.TrimSpace(q.Get("q")), Idem: randomString()}
	lq := agentjob.ListQuery{Limit: jobsPerPage + 1}
	if view.Status != "" {
		st, err := agentjob.ParseStatus(view.Status)
		if err != nil {
			return err
		}
		lq.Status = st
	}
	if c := q.Get("after"); c != "" {
		cur, err := analytics.DecodeCursor(c)
		if err != nil {
			return err
		}
		lq.After = &agentjob.Cursor{CreatedAt: cur.CreatedAt, ID: cur.ID}
	}
	if view.Query == "" {
		jobs, err := h.Jobs.List(ctx, p.ID, lq)
		if err != nil {
			return err
		}
		if len(jobs) > jobsPerPage {
			jobs = jobs[:jobsPerPage]
			last := jobs[len(jobs)-1]
			view.Next = nextQuery(q, analytics.Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
		}
		view.Jobs = jobs
	} else {
		view.Jobs, view.Searched, view.Capped, err = h.searchJobs(r, p.ID, lq, view.Query)
		if err != nil {
			return err
		}
	}
	if d, g := q.Get("domain"), q.Get("gap"); d != "" && g != "" {
		if view.Draft, err = h.draftFromGap(r, v, p, d, g); err != nil {
			return err
		}
	}
	return h.render(w, r, v, http.StatusOK, "jobs", "Jobs · "+p.ID, "jobs:"+p.ID, view)
}

// searchJobs reads the newest jobs page by page and keeps those with a
// prompt containing query (case-insensitive).
func (h *Handler) searchJobs(r *http.Request, projectID string, lq agentjob.ListQuery, query string) ([]agentjob.Job, int, bool, error) {
	needle := strings.ToLower(query)
	var out []agentjob.Job
	read := 0
	lq.Limit = 200
	for read < maxSearchJobs && len(out) < jobsPerPage {
		jobs, err := h.Jobs.List(r.Context(), projectID, lq)
		if err != nil {
			return nil, 0, false, err
		}
		read += len(jobs)
		for _, j := range jobs {
			for _, m := range j.Messages {
				if strings.Contains(strings.ToLower(m.Prompt), needle) {
					out = append(out, j)
					break
				}
			}
		}
		if len(jobs) < lq.Limit {
			return out, read, false, nil
		}
		last := jobs[len(jobs)-1]
		lq.After = &agentjob.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, read, true, nil
}

func nextQuery(q url.Values, c analytics.Cursor) string {
	n := url.Values{}
	for k, vs := range q {
		if k != "after" && k != "cursor" {
			n[k] = vs
		}
	}
	n.Set("after", c.Encode())
	return n.Encode()
}

// draftFromGap finds the gap of the domain and drafts the job's prompt. The
// domain must be the viewer's and over this project. The gap is looked for
// over the request's from/to, the range of the gaps page that linked here
// (a gap's key depends on the questions of its range).
func (h *Handler) draftFromGap(r *http.Request, v *viewer, p tenant.Project, domainID, key string) (draftView, error) {
	d, err := h.domain(r.Context(), v, domainID)
	if err != nil {
		return draftView{}, err
	}
	if d.ProjectID != p.ID {
		return draftView{}, apperr.New(apperr.Invalid, "domain %q answers from project %q, not %q", d.ID, d.ProjectID, p.ID)
	}
	f, rng, err := readFilter(r)
	if err != nil {
		return draftView{}, err
	}
	g, err := h.findGap(r.Context(), d.ID, key, rng)
	if err != nil {
		return draftView{}, err
	}
	view := draftView{Domain: d.ID, Gap: g.Key, Gapped: &g, From: f.From, To: f.To, Model: p.Model}
	if p.Model != analytics.BuiltinModel {
		view.Prompt = analytics.DraftPrompt(g)
		return view, nil
	}
	// The builtin model cannot write what readers asked: the draft adds a
	// page for a writer, in the group of the gap's top page.
	group := h.navGroup(r.Context(), d, g.TopPage)
	view.Builtin, view.NoGroup = true, group == ""
	if group == "" {
		group = "GROUP"
	}
	view.Prompt = analytics.DraftBuiltinPrompt(g, group)
	return view, nil
}

// findGap finds the gap key of the domain over rng.
func (h *Handler) findGap(ctx context.Context, domainID, key string, rng analytics.Range) (analytics.Gap, error) {
	gaps, err := h.Analytics.Gaps(ctx, domainID, rng)
	if err != nil {
		return analytics.Gap{}, err
	}
	for _, g := range gaps {
		if g.Key == key {
			return g, nil
		}
	}
	return analytics.Gap{}, apperr.New(apperr.NotFound, "no content gap %q in domain %q any more", key, domainID)
}

// navGroup is the navigation group of the domain's page (its innermost
// section), else of its first page that has one; "" when none is known.
func (h *Handler) navGroup(ctx context.Context, d tenant.Domain, page string) string {
	if h.Catalog == nil {
		return ""
	}
	c, err := h.Catalog.Catalog(ctx, d)
	if err != nil {
		h.Log.InfoContext(ctx, "no page catalog for a builtin draft", "domain", d.ID, "err", err)
		return ""
	}
	first := ""
	for _, pg := range c.Pages {
		if len(pg.Section) == 0 {
			continue
		}
		group := pg.Section[len(pg.Section)-1]
		if pg.Path == page {
			return group
		}
		if first == "" {
			first = group
		}
	}
	return first
}

func (h *Handler) createJob(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, err := h.project(ctx, v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	domainID, gapKey := r.PostFormValue("domain"), r.PostFormValue("gap")
	var d tenant.Domain
	if gapKey != "" {
		if d, err = h.domain(ctx, v, domainID); err != nil {
			return err
		}
		if d.ProjectID != p.ID {
			return apperr.New(apperr.Invalid, "domain %q answers from project %q, not %q", d.ID, d.ProjectID, p.ID)
		}
	}
	// The form's token doubles as the idempotency key: a double submit
	// makes one job.
	idem := r.PostFormValue("idem")
	if err := agentjob.ValidateIdempotencyKey(idem); err != nil || idem == "" {
		idem = ""
	}
	job, replayed, err := h.Jobs.Create(ctx, p, r.PostFormValue("prompt"), idem)
	if err != nil {
		return err
	}
	if gapKey != "" && !replayed {
		if err := h.linkGap(r, d, p, gapKey, job.ID); err != nil {
			return err
		}
	}
	http.Redirect(w, r, jobURL(p.ID, job.ID), http.StatusSeeOther)
	return nil
}

// linkGap links the job to the gap and starts the gap's lifecycle with its
// questions, found over the range the form was drafted over. A gap no
// longer in that range keeps the questions of its lifecycle, if it has
// one.
func (h *Handler) linkGap(r *http.Request, d tenant.Domain, p tenant.Project, key, jobID string) error {
	ctx := r.Context()
	link := analytics.GapJob{Domain: d.ID, GapKey: key, ProjectID: p.ID, JobID: jobID, CreatedAt: h.Now()}
	rng, err := analytics.ParseRange(r.PostFormValue("from"), r.PostFormValue("to"))
	if err != nil {
		return err
	}
	g, err := h.findGap(ctx, d.ID, key, rng)
	if apperr.Is(err, apperr.NotFound) {
		return h.Analytics.LinkGapJob(ctx, link)
	}
	if err != nil {
		return err
	}
	return h.Analytics.StartGapWork(ctx, link, g)
}

func jobURL(projectID, jobID string) string {
	return "/ui/projects/" + url.PathEscape(projectID) + "/jobs/" + url.PathEscape(jobID)
}

type jobView struct {
	Project tenant.Project
	Job     agentjob.Job
	Events  []eventView
	LastID  int64
	Idem    string
	Live    bool
}

// eventView is one line of a job's timeline.
type eventView struct {
	ID   int64
	Type string
	Text string
	At   time.Time
}

func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, err := h.project(ctx, v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	job, err := h.Jobs.Get(ctx, p.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	view := jobView{Project: p, Job: job, Idem: randomString(), Live: !settled(job)}
	for after := int64(0); ; {
		events, err := h.Jobs.Events(ctx, job.ID, after, 500)
		if err != nil {
			return err
		}
		for _, e := range events {
			view.Events = append(view.Events, eventView{ID: e.ID, Type: e.Type, Text: describeEvent(e), At: e.CreatedAt})
			after = e.ID
		}
		if len(events) < 500 || len(view.Events) >= 5000 {
			break
		}
	}
	if n := len(view.Events); n > 0 {
		view.LastID = view.Events[n-1].ID
	}
	return h.render(w, r, v, http.StatusOK, "job", "Job "+shortID(job.ID), "jobs:"+p.ID, view)
}

func (h *Handler) messageJob(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, err := h.project(ctx, v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	idem := r.PostFormValue("idem")
	if agentjob.ValidateIdempotencyKey(idem) != nil {
		idem = ""
	}
	job, _, err := h.Jobs.Message(ctx, p.ID, r.PathValue("id"), r.PostFormValue("prompt"), idem)
	if err != nil {
		return err
	}
	http.Redirect(w, r, jobURL(p.ID, job.ID), http.StatusSeeOther)
	return nil
}

func (h *Handler) cancelJob(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return h.changeJob(w, r, v, h.Jobs.Cancel)
}

func (h *Handler) archiveJob(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return h.changeJob(w, r, v, h.Jobs.Archive)
}

func (h *Handler) changeJob(w http.ResponseWriter, r *http.Request, v *viewer, change func(ctx context.Context, projectID, jobID string) (agentjob.Job, error)) error {
	p, err := h.project(r.Context(), v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	job, err := change(r.Context(), p.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	http.Redirect(w, r, jobURL(p.ID, job.ID), http.StatusSeeOther)
	return nil
}

// settled: the job writes no more events unless someone acts.
func settled(j agentjob.Job) bool {
	if j.Status == agentjob.Active {
		return false
	}
	for _, m := range j.Messages {
		if m.State == agentjob.TurnRunning || m.State == agentjob.TurnQueued {
			return false
		}
	}
	return true
}

func shortID(id string) string { return agentjob.ShortID(id) }
