package checkrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// ErrNotBuilt was returned by Run before the runner was built.
//
// Deprecated: Run never returns it.
var ErrNotBuilt = errors.New("checkrun: not built yet")

// DefaultParallel is how many questions a run asks at once, each side.
const DefaultParallel = 4

// ProjectStore finds the project a domain answers from.
type ProjectStore interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// BaseCommits says which commit a domain's served index was built from
// ("" when unknown): freshness.Store's IndexState gives it.
type BaseCommits interface {
	ServedCommit(ctx context.Context, domain string) (string, error)
}

// Config is what a Runner needs.
type Config struct {
	Projects ProjectStore
	Repos    *projectrepo.Repos
	// Index is the served index: asked, never written.
	Index search.Index
	// Catalogs are the served page catalogs (the assistant's); nil is none.
	Catalogs assistant.CatalogStore
	// OpenModel opens a domain's model, as the assistant's does.
	OpenModel func(name string) (llm.Model, error)
	// Hybrid is the assistant's retrieval; Vectors, if set, holds the
	// served passages' vectors, which a candidate's passages unchanged
	// since take for dense retrieval.
	Hybrid  search.Hybrid
	Vectors search.VectorSource
	// MinScore is the assistant's (0: its default).
	MinScore float64
	// Bases gives the served index's commit; nil leaves it out.
	Bases BaseCommits
	// Traffic gives the checks kept from the domain's traffic; nil asks
	// the checks file's alone.
	Traffic TrafficChecks
	// Parallel bounds the questions asked at once, each side
	// (DefaultParallel).
	Parallel int
	Log      *slog.Logger
	Now      func() time.Time
}

// Runner runs checks.
type Runner struct {
	cfg Config
}

// New returns a Runner.
func New(cfg Config) *Runner {
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	return &Runner{cfg: cfg}
}

// candidate is what a run read at the ref: the commit, the checks file
// (nil when there is none) and the docs' chunks.
type candidate struct {
	commit   string
	file     []byte
	chunks   []search.Chunk
	problems []string
}

// Run runs the domain's checks as req says and returns the report. It does
// not store it.
//
// With a Ref, the docs of the ref are read from the project's repository
// (through its mirror), indexed in memory (never stored: the served index,
// its snapshots and its statistics are not touched) and every check is
// asked on that index and on the served one; with Ref "", the checks are
// read at the domain's branch head and asked on the served index alone.
// The checks are the checks file's (.docsmith/checks.yaml at the ref) and
// those kept from traffic. A checks file with mistakes still runs its
// valid checks; the mistakes are the report's Problems. Problems with the
// repository or the docs are apperr errors that say what to fix.
func (r *Runner) Run(ctx context.Context, req Request) (answercheck.Report, error) {
	d := req.Domain
	rep := answercheck.Report{Domain: d.ID, Ref: req.Ref, StartedAt: r.cfg.Now()}
	p, err := r.cfg.Projects.GetProject(ctx, d.ProjectID)
	if err != nil {
		return rep, fmt.Errorf("check %s: project %s: %w", d.ID, d.ProjectID, err)
	}
	cand, err := r.read(ctx, d, p, req.Ref)
	if err != nil {
		return rep, err
	}
	rep.Commit = cand.commit
	rep.Problems = append(rep.Problems, cand.problems...)
	if r.cfg.Bases != nil {
		if rep.BaseCommit, err = r.cfg.Bases.ServedCommit(ctx, d.ID); err != nil {
			return rep, fmt.Errorf("check %s: the served index's commit: %w", d.ID, err)
		}
	}
	checks, problems, err := r.checks(ctx, d, cand.file)
	if err != nil {
		return rep, err
	}
	rep.Problems = append(rep.Problems, problems...)
	if len(checks) == 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("there are no checks to run: add questions to %s in the docs repository", answercheck.FilePath))
	}

	served := r.cfg.Hybrid
	var onCandidate *assistant.Service
	if req.Ref != "" {
		start := time.Now()
		fixed := search.NewFixed(d.ID, cand.chunks)
		candHybrid := r.cfg.Hybrid
		if r.cfg.Hybrid.Embedder != nil {
			if why := r.attachVectors(ctx, d.ID, fixed); why != "" {
				// Both sides rank alike, so that what moves is the docs.
				candHybrid.Embedder, served.Embedder = nil, nil
				how := "keyword retrieval"
				if r.cfg.Hybrid.Reranker != nil {
					how += " and the reranker"
				}
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: both sides were asked with %s alone, where readers' answers also use dense retrieval", why, how))
			}
		}
		rep.IndexDuration = time.Since(start)
		onCandidate = r.service(fixed, nil, candHybrid)
	}
	onServed := r.service(r.cfg.Index, r.cfg.Catalogs, served)

	start := time.Now()
	var before, after []answercheck.Result
	if onCandidate == nil {
		res, failed := r.askAll(ctx, d, onServed, checks)
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("check %s: %w", d.ID, err)
		}
		for i, err := range failed {
			failed[i] = fmt.Errorf("on the served index: %w", err)
		}
		after = keep(res, failed)
		rep.Problems = append(rep.Problems, failures(checks, failed)...)
	} else {
		var (
			wg               sync.WaitGroup
			bres, ares       []answercheck.Result
			bfailed, afailed map[int]error
		)
		wg.Go(func() { bres, bfailed = r.askAll(ctx, d, onServed, checks) })
		wg.Go(func() { ares, afailed = r.askAll(ctx, d, onCandidate, checks) })
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("check %s: %w", d.ID, err)
		}
		// A check whose answer failed on either side is left out of the
		// comparison: a model's hiccup is no regression.
		failed := map[int]error{}
		for i, err := range bfailed {
			failed[i] = fmt.Errorf("on the served index: %w", err)
		}
		for i, err := range afailed {
			if _, ok := failed[i]; !ok {
				failed[i] = fmt.Errorf("on %s: %w", req.Ref, err)
			}
		}
		before, after = keep(bres, failed), keep(ares, failed)
		rep.Problems = append(rep.Problems, failures(checks, failed)...)
	}
	rep.AnswerDuration = time.Since(start)
	rep.Checks, rep.Totals = answercheck.Compare(before, after)
	r.cfg.Log.InfoContext(ctx, "checks run", "domain", d.ID, "ref", req.Ref, "commit", rep.Commit, "trigger", req.Trigger,
		"checks", rep.Totals.Checks, "passed", rep.Totals.Passed, "newly_answered", rep.Totals.NewlyAnswered, "regressed", rep.Totals.Regressed,
		"problems", len(rep.Problems), "index_duration", rep.IndexDuration, "answer_duration", rep.AnswerDuration)
	return rep, nil
}

// read reads what the run needs from the project's repository: with a
// ref, its docs and checks file; without, the checks file at the domain's
// branch head.
func (r *Runner) read(ctx context.Context, d tenant.Domain, p tenant.Project, ref string) (candidate, error) {
	if dir, ok := projectrepo.PlainFolder(p.RepoURL); ok {
		if ref != "" {
			return candidate{}, apperr.New(apperr.Invalid, "project %s reads a plain folder, which has no refs to check; run the checks without a ref, on the served index", p.ID)
		}
		var c candidate
		c.file, c.problems = checksFile(projectrepo.ReadFolderFile(dir, answercheck.FilePath, answercheck.MaxFileBytes))
		return c, nil
	}
	branch := ref
	if branch == "" {
		if branch = d.Ref; branch == "" {
			branch = p.BaseRef
		}
	}
	if err := gitcli.ValidateFetchRef(branch); err != nil {
		return candidate{}, apperr.Wrap(err, apperr.Invalid, "ref %q cannot be checked: give a branch, refs/heads/BRANCH, refs/pull/N/head or refs/merge-requests/N/head", branch)
	}
	m, err := r.cfg.Repos.OpenMirror(ctx, p)
	if err != nil {
		return candidate{}, r.fetchFailed(ctx, d, p, branch, err)
	}
	defer m.Close()
	var c candidate
	var src *projectrepo.Docs
	if ref == "" {
		if c.commit, err = m.Fetch(ctx, branch); err != nil {
			return candidate{}, r.fetchFailed(ctx, d, p, branch, err)
		}
	} else {
		src, err = m.ReadDocs(ctx, ref, projectrepo.DocsWorkspaces+"check-"+projectrepo.WorkspaceName(d.ID)+"-")
		if err != nil {
			return candidate{}, r.fetchFailed(ctx, d, p, branch, err)
		}
		defer src.Close()
		c.commit = src.Commit
	}
	c.file, c.problems = checksFile(m.ReadFile(ctx, c.commit, answercheck.FilePath, answercheck.MaxFileBytes))
	m.Close()
	if src == nil {
		return c, nil
	}
	if link, ok := projectrepo.LinkOnDocsRoot(src.Links, p.DocsRoot); ok {
		return candidate{}, apperr.New(apperr.Conflict, "could not read the docs of %s at docs root %q: %s is a symbolic link in the repository, and docsmith does not follow symbolic links", ref, p.DocsRoot, link)
	}
	if src.Tree != nil {
		_, c.chunks, err = search.LoadTree(src.Tree, p.DocsRoot, d.SiteURL)
	} else {
		_, c.chunks, err = search.LoadFolder(src.Dir, p.DocsRoot, d.SiteURL)
	}
	if err != nil {
		return candidate{}, apperr.Wrap(err, apperr.Conflict, "could not read the docs of %s at docs root %q: %s", ref, p.DocsRoot, indexer.DocsProblem(err))
	}
	return c, nil
}

// checksFile turns the reading of the checks file into its data, or the
// problem to report: no file is no problem (the traffic's checks may run).
func checksFile(data []byte, err error) ([]byte, []string) {
	var fp *projectrepo.FileProblem
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &fp):
		return nil, []string{fp.Error()}
	}
	return nil, []string{fmt.Sprintf("%s could not be read: %s", answercheck.FilePath, gitcli.Redact(err.Error()))}
}

// fetchFailed says why the repository could not be read at ref.
func (r *Runner) fetchFailed(ctx context.Context, d tenant.Domain, p tenant.Project, ref string, err error) error {
	var ae *apperr.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("check %s: %w", d.ID, ctx.Err())
	case errors.As(err, &ae):
		return err
	}
	r.cfg.Log.WarnContext(ctx, "check: fetch failed", "domain", d.ID, "project", p.ID, "ref", ref, "err", err)
	return projectrepo.CloneError(err, p.ID, ref)
}

// checks are the checks file's and the traffic's, each name once: a
// traffic check whose name a file's check has takes the next free one.
func (r *Runner) checks(ctx context.Context, d tenant.Domain, file []byte) ([]answercheck.Check, []string, error) {
	var checks []answercheck.Check
	var problems []string
	if file != nil {
		var ps []answercheck.Problem
		checks, ps = answercheck.ParseFile(answercheck.FilePath, file)
		for _, p := range ps {
			problems = append(problems, p.Error())
		}
	}
	if r.cfg.Traffic == nil {
		return checks, problems, nil
	}
	kept, err := r.cfg.Traffic.ActiveChecks(ctx, d.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("check %s: the checks kept from traffic: %w", d.ID, err)
	}
	taken := map[string]bool{}
	for _, c := range checks {
		taken[c.Name] = true
	}
	for _, c := range kept {
		if c.Name == "" {
			c.Name = answercheck.Slug(c.Question)
		}
		c.Name = answercheck.UniqueName(c.Name, func(s string) bool { return taken[s] })
		taken[c.Name] = true
		checks = append(checks, c)
	}
	return checks, problems, nil
}

// attachVectors gives the candidate's passages the served vectors of the
// same text; it returns why dense retrieval cannot rank the candidate as
// it ranks the served index ("" when it can).
func (r *Runner) attachVectors(ctx context.Context, domain string, fixed *search.Fixed) string {
	if r.cfg.Vectors == nil {
		return "the passages' vectors are not at hand"
	}
	byHash := map[string][]float32{}
	err := r.cfg.Vectors.DomainVectors(ctx, domain, r.cfg.Hybrid.Embedder.Model(), func(v search.Vector) error {
		byHash[v.Hash] = v.Values
		return nil
	})
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "check: reading the passages' vectors failed", "domain", domain, "err", err)
		return "the passages' vectors could not be read"
	}
	if n := fixed.SetVectors(func(h string) []float32 { return byHash[h] }); n < fixed.Chunks() {
		return fmt.Sprintf("%d of the ref's %d passages are new and have no vector yet", fixed.Chunks()-n, fixed.Chunks())
	}
	return ""
}

// service is an assistant over idx that keeps no thread and no turn:
// checks never show in conversations, insights or gaps.
func (r *Runner) service(idx search.Index, catalogs assistant.CatalogStore, h search.Hybrid) *assistant.Service {
	return assistant.New(assistant.Config{
		Index:     idx,
		Threads:   noThreads{},
		Turns:     answercheck.DiscardTurns{},
		Catalogs:  catalogs,
		OpenModel: r.cfg.OpenModel,
		Log:       r.cfg.Log,
		MinScore:  r.cfg.MinScore,
		Hybrid:    h,
	})
}

// askAll asks every check on svc, Parallel at a time, and judges the
// answers; failed holds the checks (by index) whose answer failed.
func (r *Runner) askAll(ctx context.Context, d tenant.Domain, svc *assistant.Service, checks []answercheck.Check) ([]answercheck.Result, map[int]error) {
	results := make([]answercheck.Result, len(checks))
	errs := make([]error, len(checks))
	asker := answercheck.Asker{Service: svc}
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	for i, c := range checks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			ans, _, err := asker.Ask(ctx, d, c.Question)
			if err != nil {
				errs[i] = err
				return
			}
			results[i] = answercheck.Judge(c, ClipAnswer(ans))
		})
	}
	wg.Wait()
	failed := map[int]error{}
	for i, err := range errs {
		if err != nil {
			failed[i] = err
		}
	}
	return results, failed
}

// keep is results without the failed ones.
func keep(results []answercheck.Result, failed map[int]error) []answercheck.Result {
	out := make([]answercheck.Result, 0, len(results))
	for i, res := range results {
		if _, ok := failed[i]; !ok {
			out = append(out, res)
		}
	}
	return out
}

// failures are the problems of the checks whose answer failed, in order.
func failures(checks []answercheck.Check, failed map[int]error) []string {
	var out []string
	for i, c := range checks {
		if err, ok := failed[i]; ok {
			out = append(out, fmt.Sprintf("check %s was left out: its answer failed %s", c.Name, err))
		}
	}
	return out
}

// MaxAnswerText bounds an answer's text kept in a report.
const MaxAnswerText = 4000

// ClipAnswer cuts an answer's text to MaxAnswerText bytes (on a character
// boundary) and its citations to 20, for a report kept and shown.
func ClipAnswer(a answercheck.Answer) answercheck.Answer {
	a = clipText(a, MaxAnswerText)
	if len(a.Cited) > 20 {
		a.Cited = a.Cited[:20]
	}
	return a
}

// noThreads is the thread store of a check's assistant: no thread exists,
// and none is kept.
type noThreads struct{}

func (noThreads) GetThread(context.Context, string) (assistant.Thread, error) {
	return assistant.Thread{}, apperr.New(apperr.NotFound, "no thread")
}
func (noThreads) AddTurn(context.Context, assistant.Turn) (int, error) { return 0, nil }
func (noThreads) AddTurns(_ context.Context, turns []assistant.Turn) ([]int, error) {
	return make([]int, len(turns)), nil
}
func (noThreads) RecentTurns(context.Context, string, int) ([]assistant.Turn, error) { return nil, nil }
func (noThreads) RateTurn(context.Context, assistant.Feedback) error {
	return apperr.New(apperr.NotFound, "no thread")
}
