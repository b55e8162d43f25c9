package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

// CheckRunReader reads a domain's stored runs of answer checks
// (checkrun.Store).
type CheckRunReader interface {
	GetRun(ctx context.Context, domain, id string) (checkrun.Run, error)
	ListRuns(ctx context.Context, domain, trigger string, limit int) ([]checkrun.Run, error)
}

// runsShown is how many of the newest runs the checks page lists.
const runsShown = 20

// alertSections are the sections of a domain's pages, which show the
// newest scheduled run's regressions above their content.
var alertSections = []string{"conversations", "insights", "gaps", "feedback", "checks"}

// regressionAlert is the newest scheduled run of a domain that found
// regressions: shown on every page of the domain until a later scheduled
// run finds none.
type regressionAlert struct {
	Domain string
	Run    checkrun.Run
	Checks []answercheck.Compared
}

// URL is the run's page.
func (a regressionAlert) URL() string { return checkRunURL(a.Domain, a.Run.ID) }

// regressions returns the alert of the domain, nil when its newest
// scheduled run found no regression (or there is none).
func (h *Handler) regressions(ctx context.Context, domain string) (*regressionAlert, error) {
	if h.CheckRuns == nil {
		return nil, nil //nolint:nilnil // no runs kept: nothing to show
	}
	runs, err := h.CheckRuns.ListRuns(ctx, domain, checkrun.TriggerSchedule, 1)
	if err != nil || len(runs) == 0 || runs[0].Report.Totals.Regressed == 0 {
		return nil, err
	}
	a := &regressionAlert{Domain: domain, Run: runs[0]}
	for _, c := range runs[0].Report.Checks {
		if c.Change == answercheck.Regressed {
			a.Checks = append(a.Checks, c)
		}
	}
	return a, nil
}

// alertFor is the regression alert of the domain a section names
// ("gaps:tern"), nil for other sections. An error is logged, not shown: the
// page itself is what the viewer asked for.
func (h *Handler) alertFor(r *http.Request, section string) *regressionAlert {
	kind, domain, ok := strings.Cut(section, ":")
	if !ok || !slices.Contains(alertSections, kind) {
		return nil
	}
	a, err := h.regressions(r.Context(), domain)
	if err != nil {
		h.Log.WarnContext(r.Context(), "read the newest scheduled check run", "domain", domain, "err", err)
	}
	return a
}

func checkRunURL(domain, id string) string {
	return "/ui/domains/" + url.PathEscape(domain) + "/checks/runs/" + url.PathEscape(id)
}

// trafficCheckView is a traffic check with its result in the newest run
// that asked it.
type trafficCheckView struct {
	trafficcheck.Check
	Last *answercheck.Compared
}

// CiteText and ContainsText are the lists as the edit form shows them.
func (v trafficCheckView) CiteText() string     { return strings.Join(v.Cite, ", ") }
func (v trafficCheckView) ContainsText() string { return strings.Join(v.Contains, ", ") }

type checksView struct {
	Domain    tenant.Domain
	Available bool // traffic checks are kept on this server
	Traffic   []trafficCheckView
	Dropped   []trafficCheckView
	// Newest is the newest run, whose file checks the page lists.
	Newest     *checkrun.Run
	FileChecks []answercheck.Compared
	Runs       []checkrun.Run
	// Keep is how many harvested checks of each kind a domain keeps.
	Keep int
}

func (h *Handler) checksPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	d, err := h.domain(ctx, v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	view := checksView{Domain: d, Available: h.TrafficChecks != nil}
	view.Keep = trafficcheck.KeepHarvested
	if h.CheckRuns != nil {
		if view.Runs, err = h.CheckRuns.ListRuns(ctx, d.ID, "", runsShown); err != nil {
			return err
		}
	}
	lastByID := map[string]*answercheck.Compared{}
	if len(view.Runs) > 0 {
		view.Newest = &view.Runs[0]
		for i, c := range view.Newest.Report.Checks {
			if c.After.Check.Origin == answercheck.OriginFile {
				view.FileChecks = append(view.FileChecks, c)
			} else if c.After.Check.ID != "" {
				lastByID[c.After.Check.ID] = &view.Newest.Report.Checks[i]
			}
		}
	}
	if h.TrafficChecks != nil {
		cs, err := h.TrafficChecks.List(ctx, d.ID)
		if err != nil {
			return err
		}
		for _, c := range cs {
			cv := trafficCheckView{Check: c, Last: lastByID[c.ID]}
			if c.Dropped {
				view.Dropped = append(view.Dropped, cv)
			} else {
				view.Traffic = append(view.Traffic, cv)
			}
		}
	}
	return h.render(w, r, v, http.StatusOK, "checks", "Answer checks · "+d.ID, "checks:"+d.ID, view)
}

type checkRunView struct {
	Domain tenant.Domain
	Run    checkrun.Run
	// Checks are the run's checks, regressed first, then the other
	// failures, newly answered, and the rest, each group in the run's
	// order.
	Checks []answercheck.Compared
}

// changeRank orders a run's checks: what needs a look first.
func changeRank(c answercheck.Compared) int {
	switch {
	case c.Change == answercheck.Regressed:
		return 0
	case !c.After.Pass:
		return 1
	case c.Change == answercheck.NewlyAnswered:
		return 2
	}
	return 3
}

func (h *Handler) checkRunPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	d, err := h.domain(ctx, v, r.PathValue("domain"))
	if err != nil {
		return err
	}
	if h.CheckRuns == nil {
		return apperr.New(apperr.NotFound, "this server keeps no runs of answer checks")
	}
	run, err := h.CheckRuns.GetRun(ctx, d.ID, r.PathValue("runId"))
	if err != nil {
		return err
	}
	view := checkRunView{Domain: d, Run: run, Checks: slices.Clone(run.Report.Checks)}
	slices.SortStableFunc(view.Checks, func(a, b answercheck.Compared) int { return changeRank(a) - changeRank(b) })
	return h.render(w, r, v, http.StatusOK, "checkrun", "Check run · "+d.ID, "checks:"+d.ID, view)
}

// trafficCheckAction loads the path's domain and check for a form.
func (h *Handler) trafficCheckAction(r *http.Request, v *viewer) (tenant.Domain, string, error) {
	if h.TrafficChecks == nil {
		return tenant.Domain{}, "", apperr.New(apperr.NotFound, "this server keeps no checks from traffic")
	}
	d, err := h.domain(r.Context(), v, r.PathValue("domain"))
	if err != nil {
		return tenant.Domain{}, "", err
	}
	return d, r.PathValue("id"), nil
}

// backToCheck sends the browser back to the check on the checks page, with
// a notice.
func backToCheck(w http.ResponseWriter, r *http.Request, domain, id, flash string) {
	http.Redirect(w, r, "/ui/domains/"+url.PathEscape(domain)+"/checks?flash="+flash+"#check-"+url.PathEscape(id), http.StatusSeeOther)
}

// formBool reads a form's "true" or "false".
func formBool(r *http.Request, name string) (bool, error) {
	switch r.PostFormValue(name) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, apperr.New(apperr.Invalid, "%s must be true or false", name)
}

func (h *Handler) pinCheck(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, id, err := h.trafficCheckAction(r, v)
	if err != nil {
		return err
	}
	pinned, err := formBool(r, "pinned")
	if err != nil {
		return err
	}
	if _, err := h.TrafficChecks.Pin(r.Context(), d.ID, id, pinned); err != nil {
		return err
	}
	flash := "check-unpinned"
	if pinned {
		flash = "check-pinned"
	}
	backToCheck(w, r, d.ID, id, flash)
	return nil
}

func (h *Handler) dropCheck(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, id, err := h.trafficCheckAction(r, v)
	if err != nil {
		return err
	}
	dropped, err := formBool(r, "dropped")
	if err != nil {
		return err
	}
	if _, err := h.TrafficChecks.Drop(r.Context(), d.ID, id, dropped); err != nil {
		return err
	}
	flash := "check-restored"
	if dropped {
		flash = "check-dropped"
	}
	backToCheck(w, r, d.ID, id, flash)
	return nil
}

// splitList reads a form's list: entries separated by commas or new lines.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' })
}

func (h *Handler) editCheck(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, id, err := h.trafficCheckAction(r, v)
	if err != nil {
		return err
	}
	e := trafficcheck.Edit{
		Question:   r.PostFormValue("question"),
		Cite:       splitList(r.PostFormValue("cite")),
		Contains:   splitList(r.PostFormValue("contains")),
		NotCovered: r.PostFormValue("not_covered") == "true",
	}
	if _, err := h.TrafficChecks.Edit(r.Context(), d.ID, id, e); err != nil {
		return err
	}
	backToCheck(w, r, d.ID, id, "check-saved")
	return nil
}

// expectations says what a good answer to c must do, one phrase each.
func expectations(c answercheck.Check) []string {
	var out []string
	if c.NotCovered {
		return []string{"say the docs do not cover it"}
	}
	if c.Answered {
		out = append(out, "answer it wholly")
	}
	if len(c.Cite) > 0 {
		out = append(out, "cite "+strings.Join(c.Cite, " or "))
	}
	if len(c.Contains) > 0 {
		out = append(out, "contain “"+strings.Join(c.Contains, "”, “")+"”")
	}
	if len(out) == 0 {
		out = append(out, "not say the docs do not cover it")
	}
	return out
}

// changeWords is a run's change of a check as the pages say it.
func changeWords(c answercheck.Change) string {
	switch c {
	case answercheck.NewlyAnswered:
		return "newly answered"
	case answercheck.Regressed:
		return "regressed"
	case answercheck.Added:
		return "new"
	}
	return "unchanged"
}

// triggerWords is what asked for a run.
func triggerWords(t string) string {
	switch t {
	case checkrun.TriggerPullRequest:
		return "pull request"
	case checkrun.TriggerSchedule:
		return "schedule"
	case checkrun.TriggerCLI:
		return "command line"
	case checkrun.TriggerAPI:
		return "API"
	}
	return t
}
