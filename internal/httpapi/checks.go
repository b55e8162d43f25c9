package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/gitcli"
)

// CheckRunner runs a domain's answer checks (checkrun.Runner).
type CheckRunner interface {
	Run(ctx context.Context, req checkrun.Request) (answercheck.Report, error)
}

const (
	// DefaultCheckRunTimeout bounds a run when Deps does not say: a
	// temporary index of a large site and a few hundred answers fit in it.
	DefaultCheckRunTimeout = 15 * time.Minute
	// DefaultCheckRunsPerDomain is how many runs of one domain may go on
	// at once when Deps does not say: each holds an index of the ref in
	// memory and asks the model twice per check.
	DefaultCheckRunsPerDomain = 2
	// checkRunBodyLimit bounds the run request's body: it holds a ref.
	checkRunBodyLimit = 4 << 10
	// defaultCheckRunsPage is how many runs a list shows without a limit.
	defaultCheckRunsPage = 20
)

// checkRunBody is the body of POST /v2/domains/{domain}/checks/run.
type checkRunBody struct {
	Ref string `json:"ref"`
}

// runChecks runs the domain's answer checks, with an admin key of the
// domain's organization: on a temporary index of the body's ref compared
// with the served index, or on the served index alone without a ref. It
// stores the run and answers with it once the run is done.
func (s *Server) runChecks(w http.ResponseWriter, r *http.Request) error {
	if s.Checks == nil || s.CheckRuns == nil {
		return apperr.New(apperr.Unavailable, "answer checks are not available on this server")
	}
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	if err != nil {
		return err
	}
	body, err := decodeCheckRunBody(w, r)
	if err != nil {
		return err
	}
	limit := s.CheckRunsPerDomain
	if limit <= 0 {
		limit = DefaultCheckRunsPerDomain
	}
	release, ok := s.checkRunSlots.take(d.ID, limit)
	if !ok {
		return apperr.New(apperr.Conflict, "%d check runs of domain %q are going on already, the most at once; retry when one has ended", limit, d.ID)
	}
	defer release()

	timeout := s.CheckRunTimeout
	if timeout <= 0 {
		timeout = DefaultCheckRunTimeout
	}
	// A run outlasts the server's write timeout; its own timeout bounds it.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	ctx, stop := s.answerContext(ctx)
	defer stop()
	report, err := s.Checks.Run(ctx, checkrun.Request{Domain: d, Ref: body.Ref, Trigger: checkrun.TriggerAPI})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil && apperr.CodeOf(err) == apperr.Internal {
			return apperr.Wrap(err, apperr.Unavailable, "the check run took longer than %s and was stopped; ask fewer checks or retry when the server is less busy", timeout)
		}
		return err
	}
	run, err := s.CheckRuns.SaveRun(r.Context(), checkrun.Run{Domain: d.ID, Trigger: checkrun.TriggerAPI, Report: report})
	if err != nil {
		return fmt.Errorf("store the check run of %s: %w", d.ID, err)
	}
	w.Header().Set("Location", checkRunPath(d.ID, run.ID))
	writeJSON(w, http.StatusCreated, run)
	return nil
}

func checkRunPath(domain, id string) string {
	return "/v2/domains/" + url.PathEscape(domain) + "/checks/runs/" + url.PathEscape(id)
}

// decodeCheckRunBody reads the optional body of a run request: none, or
// a JSON object with at most a ref. Unknown fields are refused: a
// misspelt "ref" would otherwise check the served index, not the change.
func decodeCheckRunBody(w http.ResponseWriter, r *http.Request) (checkRunBody, error) {
	var body checkRunBody
	if r.ContentLength == 0 {
		return body, nil
	}
	raw, err := readJSON(w, r, checkRunBodyLimit)
	if err != nil {
		return body, err
	}
	if strings.TrimSpace(string(raw)) == "" {
		return body, nil
	}
	if err := decodeStrict(raw, &body, "ref"); err != nil {
		return body, err
	}
	if body.Ref != "" {
		if err := gitcli.ValidateRef(body.Ref); err != nil {
			return body, apperr.Wrap(err, apperr.Invalid, "field \"ref\" must be a branch (main) or a full ref (refs/pull/7/head) that git accepts: %v", err)
		}
	}
	return body, nil
}

// decodeStrict is decodeBody for a body whose every field must be known;
// fields names them for the error.
func decodeStrict(body []byte, dst any, fields string) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return apperr.New(apperr.Invalid, "the request body has an unknown field %s; the fields are: %s", field, fields)
		}
		return describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apperr.New(apperr.Invalid, "the request body has data after the JSON object; send exactly one object")
	}
	return nil
}

// checkRunSummaryJSON is a run in a list: its report without the checks.
type checkRunSummaryJSON struct {
	ID         string             `json:"id"`
	Domain     string             `json:"domain"`
	Trigger    string             `json:"trigger"`
	PRNumber   *int               `json:"prNumber"`
	PRLink     *string            `json:"prLink"`
	Summary    string             `json:"summary"`
	Ref        *string            `json:"ref"`
	Commit     *string            `json:"commit"`
	BaseCommit *string            `json:"baseCommit"`
	Totals     answercheck.Totals `json:"totals"`
	Problems   int                `json:"problems"`
	CreatedAt  string             `json:"createdAt"`
}

type checkRunListJSON struct {
	Runs []checkRunSummaryJSON `json:"runs"`
}

// listCheckRuns lists the domain's runs, newest first.
func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) error {
	if s.CheckRuns == nil {
		return apperr.New(apperr.Unavailable, "answer checks are not available on this server")
	}
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	if err != nil {
		return err
	}
	limit, trigger, err := parseCheckRunsQuery(r.URL.Query())
	if err != nil {
		return err
	}
	runs, err := s.CheckRuns.ListRuns(r.Context(), d.ID, trigger, limit)
	if err != nil {
		return err
	}
	out := checkRunListJSON{Runs: make([]checkRunSummaryJSON, 0, len(runs))}
	for _, run := range runs {
		item := checkRunSummaryJSON{
			ID: run.ID, Domain: run.Domain, Trigger: run.Trigger, PRLink: stringOrNull(run.PRLink), Summary: run.Report.Summary(),
			Ref: stringOrNull(run.Report.Ref), Commit: stringOrNull(run.Report.Commit), BaseCommit: stringOrNull(run.Report.BaseCommit),
			Totals: run.Report.Totals, Problems: len(run.Report.Problems), CreatedAt: formatTime(run.CreatedAt),
		}
		if run.PRNumber != 0 {
			item.PRNumber = &run.PRNumber
		}
		out.Runs = append(out.Runs, item)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func parseCheckRunsQuery(v url.Values) (limit int, trigger string, err error) {
	limit = defaultCheckRunsPage
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return 0, "", apperr.New(apperr.Invalid, "limit must be a whole number from 1 to %d", maxPageSize)
		}
		limit = n
	}
	switch trigger = v.Get("trigger"); trigger {
	case "", checkrun.TriggerCLI, checkrun.TriggerAPI, checkrun.TriggerPullRequest, checkrun.TriggerSchedule:
	default:
		return 0, "", apperr.New(apperr.Invalid, "trigger must be %s, %s, %s or %s",
			checkrun.TriggerCLI, checkrun.TriggerAPI, checkrun.TriggerPullRequest, checkrun.TriggerSchedule)
	}
	return limit, trigger, nil
}

// getCheckRun answers with one run of the domain and its whole report.
func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) error {
	if s.CheckRuns == nil {
		return apperr.New(apperr.Unavailable, "answer checks are not available on this server")
	}
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	if err != nil {
		return err
	}
	run, err := s.CheckRuns.GetRun(r.Context(), d.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

// domainSlots counts the runs going on per domain; its zero value is
// ready to use.
type domainSlots struct {
	mu      sync.Mutex
	running map[string]int
}

// take holds one of the domain's limit slots and returns its release, or
// false when all are held.
func (s *domainSlots) take(domain string, limit int) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = make(map[string]int)
	}
	if s.running[domain] >= limit {
		return nil, false
	}
	s.running[domain]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[domain]--; s.running[domain] <= 0 {
				delete(s.running, domain)
			}
		})
	}, true
}
