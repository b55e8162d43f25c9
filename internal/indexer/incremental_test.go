package indexer_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/retrievaleval"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// workRepo is a git work tree the tests commit docs changes to; the
// indexers read it as a project's remote.
type workRepo struct {
	t   testing.TB
	dir string
}

func newWorkRepo(t testing.TB, files fs.FS) *workRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "docs")
	must(t, os.CopyFS(dir, files))
	r := &workRepo{t: t, dir: dir}
	fixtureGit(t, dir, "init", "--quiet", "--initial-branch=main")
	r.commit("docs")
	return r
}

func (r *workRepo) commit(msg string) {
	r.t.Helper()
	fixtureGit(r.t, r.dir, "add", "-A")
	fixtureGit(r.t, r.dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", msg)
}

func (r *workRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r *workRepo) read(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(name)))
	must(r.t, err)
	return string(b)
}

// indexedDomain is a store, an indexer and a domain over the work repo.
type indexedDomain struct {
	e *env
	x *indexer.Indexer
	d tenant.Domain
}

func newIndexedDomain(t testing.TB, repo string) indexedDomain {
	t.Helper()
	e := setup(t)
	_, err := e.tenants.CreateProject(t.Context(), tenant.Project{ID: "repo", OrgID: "acme", RepoURL: repo})
	must(t, err)
	d, err := e.tenants.CreateDomain(t.Context(), tenant.Domain{ID: "docs", OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
	must(t, err)
	return indexedDomain{e: e, x: newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir()}), d: d}
}

// fresh is a new domain over the same project in the same store, with an
// indexer of its own that never built it.
func (id indexedDomain) fresh(t testing.TB, domain string) indexedDomain {
	t.Helper()
	d, err := id.e.tenants.CreateDomain(t.Context(), tenant.Domain{ID: domain, OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
	must(t, err)
	return indexedDomain{e: id.e, x: newIndexer(id.e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir()}), d: d}
}

func (id indexedDomain) chunks(t *testing.T) []search.Chunk {
	t.Helper()
	var out []search.Chunk
	_, err := id.e.store.DomainChunks(t.Context(), id.d.ID, func(c search.Chunk) error {
		out = append(out, c)
		return nil
	})
	must(t, err)
	return out
}

// TestIndexUpdateReadsOnlyWhatChanged: after a first build, a commit that
// edits one page reads the config and that page and cuts that page alone;
// a page's file removed removes that page alone; a change to the
// navigation reads everything again; a commit that touches nothing the
// docs read changes nothing; a repository gone keeps the last index
// serving.
func TestIndexUpdateReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	repo := newWorkRepo(t, os.DirFS("testdata/site"))
	id := newIndexedDomain(t, repo.dir)
	ctx := t.Context()
	first, err := id.x.Index(ctx, id.d)
	must(t, err)
	if first.Incremental || first.FullReason != "" || first.Pages != 6 {
		t.Fatalf("first build = %+v", first)
	}

	page := "guides/schedules.mdx"
	repo.write(page, strings.Replace(repo.read(page), "## Bandwidth limits\n", "## Bandwidth limits\n\nMind the wombat quota.\n", 1))
	repo.commit("edit one page")
	res, err := id.x.Index(ctx, id.d)
	must(t, err)
	if !res.Incremental || res.PagesChunked != 1 || res.Changed != 1 || res.Unchanged != 5 || res.Pages != 6 || res.FilesRead > 3 || res.Commit == first.Commit {
		t.Fatalf("one-page update = %+v", res)
	}
	hits, err := id.e.svc.Search(ctx, id.d, assistant.SearchRequest{Query: "wombat quota", PageSize: 3})
	must(t, err)
	if len(hits) == 0 || hits[0].URL != siteURL+"/guides/schedules" {
		t.Fatalf("search after the update = %+v", hits)
	}

	repo.write("images/new.txt", "not read by any build\n")
	repo.commit("an unrelated file")
	if res, err = id.x.Index(ctx, id.d); err != nil || !res.Incremental || res.FilesRead != 0 || res.Changed != 0 {
		t.Fatalf("unrelated change = %+v, %v", res, err)
	}

	// A page's file removed (its entry left): the page leaves the index,
	// nothing else is read.
	must(t, os.Remove(filepath.Join(repo.dir, "guides", "audit.mdx")))
	repo.commit("remove a page")
	if res, err = id.x.Index(ctx, id.d); err != nil || !res.Incremental || res.Removed != 1 || res.Pages != 5 || res.FilesRead > 2 {
		t.Fatalf("page removed = %+v, %v", res, err)
	}
	if _, err := id.e.svc.Page(ctx, id.d, "guides/audit", nil); err == nil {
		t.Fatal("the removed page is still served")
	}

	cfg := repo.read("docs.json")
	repo.write("docs.json", strings.Replace(cfg, `"name"`, `"description": "Tern docs", "name"`, 1))
	repo.commit("config")
	if res, err = id.x.Index(ctx, id.d); err != nil || res.Incremental || !strings.Contains(res.FullReason, "docs.json") {
		t.Fatalf("config change = %+v, %v", res, err)
	}

	// The repository goes away: the build fails and says so, the index
	// keeps serving.
	must(t, os.Rename(repo.dir, repo.dir+".gone"))
	if _, err := id.x.Index(ctx, id.d); err == nil {
		t.Fatal("a build from a missing repository succeeded")
	}
	hits, err = id.e.svc.Search(ctx, id.d, assistant.SearchRequest{Query: "wombat quota", PageSize: 3})
	must(t, err)
	if len(hits) == 0 {
		t.Fatal("the index stopped serving after a failed build")
	}
}

// TestIncrementalEqualsFullRebuild applies seeded random sequences of page
// additions, edits, renames and deletions, and navigation changes, to each
// corpus, committing each step; after every step the index the indexer
// updated holds the same chunks, page hashes, catalog and statistics as a
// full build from scratch into a fresh store, and ranks a sample of the
// corpus's evaluation questions the same.
func TestIncrementalEqualsFullRebuild(t *testing.T) {
	t.Parallel()
	steps := map[string]int{"pezzo": 8, "hoppscotch": 5, "mintlify": 2}
	if testing.Short() {
		steps = map[string]int{"pezzo": 4, "hoppscotch": 2, "mintlify": 1}
	}
	for _, name := range []string{"pezzo", "hoppscotch", "mintlify"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			corpus := corpusDir(t, name)
			questions := sampleQuestions(t, name, 8)
			repo := newWorkRepo(t, os.DirFS(corpus))
			live := newIndexedDomain(t, repo.dir)
			_, err := live.x.Index(t.Context(), live.d)
			must(t, err)
			// The full builds go to fresh domains of one store: each a
			// fresh index, built by a fresh indexer.
			rebuilt := newIndexedDomain(t, repo.dir)
			rng := rand.New(rand.NewPCG(29, uint64(len(name))))
			incremental := 0
			for step := range steps[name] {
				what := mutate(t, repo, rng, step)
				repo.commit(what)
				res, err := live.x.Index(t.Context(), live.d)
				if err != nil {
					t.Fatalf("step %d (%s): update: %v", step, what, err)
				}
				if res.Incremental {
					incremental++
				}
				t.Logf("step %d: %s: incremental %v (%s), %d files read, %d pages cut", step, what, res.Incremental, res.FullReason, res.FilesRead, res.PagesChunked)
				fresh := rebuilt.fresh(t, fmt.Sprintf("full-%d", step))
				full, err := fresh.x.Index(t.Context(), fresh.d)
				if err != nil {
					t.Fatalf("step %d (%s): full build: %v", step, what, err)
				}
				sameIndex(t, fmt.Sprintf("step %d (%s, incremental %v: %s)", step, what, res.Incremental, res.FullReason), live, fresh, res, full, questions)
			}
			if incremental == 0 {
				t.Errorf("no step was an incremental update")
			}
		})
	}
}

// sameIndex fails unless a and b hold the same index.
func sameIndex(t *testing.T, what string, a, b indexedDomain, ra, rb indexer.IndexResult, questions []string) {
	t.Helper()
	ctx := t.Context()
	if ra.Pages != rb.Pages || ra.Chunks != rb.Chunks || ra.Commit != rb.Commit {
		t.Fatalf("%s: stats %d pages, %d chunks at %s; full build %d, %d at %s", what, ra.Pages, ra.Chunks, ra.Commit, rb.Pages, rb.Chunks, rb.Commit)
	}
	ca, cb := a.chunks(t), b.chunks(t)
	if len(ca) != len(cb) {
		t.Fatalf("%s: %d chunks, full build %d", what, len(ca), len(cb))
	}
	for i := range ca {
		if !reflect.DeepEqual(ca[i], cb[i]) {
			t.Fatalf("%s: chunk %d differs:\n%+v\nfull build:\n%+v", what, i, ca[i], cb[i])
		}
	}
	ha, err := a.e.store.PageHashes(ctx, a.d.ID)
	must(t, err)
	hb, err := b.e.store.PageHashes(ctx, b.d.ID)
	must(t, err)
	if !reflect.DeepEqual(ha, hb) {
		t.Fatalf("%s: page hashes differ", what)
	}
	cata, err := a.e.store.GetCatalog(ctx, a.d.ID)
	must(t, err)
	catb, err := b.e.store.GetCatalog(ctx, b.d.ID)
	must(t, err)
	if !reflect.DeepEqual(cata, catb) {
		t.Fatalf("%s: catalogs differ:\n%+v\nfull build:\n%+v", what, cata, catb)
	}
	for _, q := range questions {
		sa, err := a.e.svc.Search(ctx, a.d, assistant.SearchRequest{Query: q, PageSize: 10})
		must(t, err)
		sb, err := b.e.svc.Search(ctx, b.d, assistant.SearchRequest{Query: q, PageSize: 10})
		must(t, err)
		if !reflect.DeepEqual(sa, sb) {
			t.Fatalf("%s: ranking of %q differs:\n%+v\nfull build:\n%+v", what, q, sa, sb)
		}
	}
}

// mutate makes one random change to the docs in repo and says what it
// was: most steps edit pages, as most commits do; the others add, rename
// or delete a page (with its navigation entry, or leaving the navigation
// as it was), change a snippet, or change the config alone.
func mutate(t *testing.T, repo *workRepo, rng *rand.Rand, step int) string {
	t.Helper()
	cfgName := "docs.json"
	if _, err := os.Stat(filepath.Join(repo.dir, cfgName)); err != nil {
		cfgName = "mint.json"
	}
	pages := navPageFiles(t, repo, cfgName)
	if len(pages) == 0 {
		t.Fatal("no page in the navigation")
	}
	pick := pages[rng.IntN(len(pages))]
	word := fmt.Sprintf("zqx%dstep%d", rng.IntN(1000), step)
	n := rng.IntN(10)
	if step == 1 {
		n = 8 // the second step changes a snippet, where there are any
	}
	switch {
	case n < 4 || step == 0: // edit a page (the first step always does)
		src := repo.read(pick.file)
		if rng.IntN(2) == 0 {
			repo.write(pick.file, src+"\n\n## Added "+word+"\n\nA paragraph about "+word+" added by a commit.\n")
		} else {
			repo.write(pick.file, strings.Replace(src, "\n\n", "\n\nEdited "+word+".\n\n", 1))
		}
		return "edit " + pick.file
	case n == 4: // add a page and its navigation entry
		nav := "added/" + word
		repo.write(nav+".mdx", "---\ntitle: Added "+word+"\n---\n\nA new page on "+word+".\n")
		editNav(t, repo, cfgName, func(list []any) []any { return append(list, nav) })
		return "add " + nav
	case n == 5: // a page file no navigation names
		repo.write("orphans/"+word+".mdx", "---\ntitle: Orphan\n---\n\n"+word+"\n")
		return "add an orphan page"
	case n == 6: // rename a page, with its entry or not
		to := path.Join(path.Dir(pick.nav), "renamed-"+word)
		must(t, os.Rename(filepath.Join(repo.dir, pick.file), filepath.Join(repo.dir, filepath.FromSlash(to+path.Ext(pick.file)))))
		if rng.IntN(2) == 0 {
			editNav(t, repo, cfgName, func(list []any) []any { return replaceIn(list, pick.nav, to) })
			return "rename " + pick.file + " with its entry"
		}
		return "rename " + pick.file + " alone"
	case n == 7: // delete a page, with its entry or not
		must(t, os.Remove(filepath.Join(repo.dir, pick.file)))
		if rng.IntN(2) == 0 {
			editNav(t, repo, cfgName, func(list []any) []any { return replaceIn(list, pick.nav, "") })
			return "delete " + pick.file + " with its entry"
		}
		return "delete " + pick.file + " alone"
	case n == 8: // a snippet, if the corpus has any, else the config
		var snippets []string
		_ = fs.WalkDir(os.DirFS(repo.dir), "snippets", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".mdx") || strings.HasSuffix(p, ".md")) {
				snippets = append(snippets, p)
			}
			return nil
		})
		if len(snippets) > 0 {
			s := snippets[rng.IntN(len(snippets))]
			repo.write(s, repo.read(s)+"\n\nSnippet text "+word+".\n")
			return "edit snippet " + s
		}
		fallthrough
	default: // the config alone
		var cfg map[string]any
		must(t, json.Unmarshal([]byte(repo.read(cfgName)), &cfg))
		cfg["description"] = "Docs as of " + word
		b, err := json.MarshalIndent(cfg, "", "  ")
		must(t, err)
		repo.write(cfgName, string(b))
		return "edit " + cfgName
	}
}

type navFile struct{ nav, file string }

// navPageFiles lists the navigation's page entries that have a file.
func navPageFiles(t testing.TB, repo *workRepo, cfgName string) []navFile {
	t.Helper()
	var cfg any
	must(t, json.Unmarshal([]byte(repo.read(cfgName)), &cfg))
	var out []navFile
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapsKeys(v)) {
				if k == "pages" {
					if list, ok := v[k].([]any); ok {
						for _, e := range list {
							if s, ok := e.(string); ok {
								for _, ext := range []string{".mdx", ".md"} {
									if fi, err := os.Stat(filepath.Join(repo.dir, filepath.FromSlash(s+ext))); err == nil && fi.Mode().IsRegular() {
										out = append(out, navFile{nav: s, file: s + ext})
										break
									}
								}
							}
						}
					}
				}
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(cfg)
	return out
}

// editNav rewrites every "pages" list of the config with edit, the first
// one only for an addition (edit is called with the first list first).
func editNav(t *testing.T, repo *workRepo, cfgName string, edit func([]any) []any) {
	t.Helper()
	var cfg any
	must(t, json.Unmarshal([]byte(repo.read(cfgName)), &cfg))
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapsKeys(v)) {
				if list, ok := v[k].([]any); ok && k == "pages" {
					v[k] = edit(list)
				}
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(cfg)
	b, err := json.MarshalIndent(cfg, "", "  ")
	must(t, err)
	repo.write(cfgName, string(b))
}

// replaceIn replaces the entry from with to in list ("" removes it).
func replaceIn(list []any, from, to string) []any {
	out := list[:0:0]
	for _, e := range list {
		if s, ok := e.(string); ok && s == from {
			if to == "" {
				continue
			}
			e = to
		}
		out = append(out, e)
	}
	return out
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sampleQuestions reads n questions of the corpus's evaluation set, or
// none when it is absent.
func sampleQuestions(t *testing.T, name string, n int) []string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(corpusDir(t, name)), "..", "evals", name, "dev-questions.jsonl")
	qs, err := retrievaleval.ReadQuestions(dir)
	if err != nil {
		t.Logf("no evaluation questions for %s: %v", name, err)
		return []string{"install", "authentication token", "configure"}
	}
	var out []string
	for i, q := range qs {
		if i%max(1, len(qs)/n) == 0 && len(out) < n {
			out = append(out, q.Question)
		}
	}
	return out
}

// corpusDir finds shared/corpora/NAME above the package directory, or
// skips.
func corpusDir(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "corpora", name), filepath.Join(dir, "..", "shared", "corpora", name)} {
			if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("corpus %s not found above the package directory", name)
		}
		dir = parent
	}
}
