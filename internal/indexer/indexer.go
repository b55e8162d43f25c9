// Package indexer builds and updates each domain's search index from its
// project's repository (read through projectrepo): it reads the docs at
// the domain's ref, cuts them into chunks and writes the pages that
// changed to the index, with the domain's page catalog.
//
// An Indexer remembers, per domain, what its last build read: the commit,
// and per page its file and what its chunks hashed to. The next build of
// the domain reads only the files changed between that commit and the
// branch's new tip, and cuts only the pages whose files changed; see
// update.go for when it reads the whole site instead.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/tenant"
)

// ProjectStore finds the project a domain answers from.
type ProjectStore interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// CatalogStore keeps the page catalog each build writes.
type CatalogStore interface {
	PutCatalog(ctx context.Context, domain string, c search.SiteCatalog) error
}

// Config is what an Indexer needs.
type Config struct {
	Repos    *projectrepo.Repos
	Projects ProjectStore
	Index    search.Index
	// Catalogs receives the page catalog of each build; nil keeps none.
	Catalogs CatalogStore
	Log      *slog.Logger
}

// VectorIndex is an index that keeps passage vectors (search.Memory with
// an embedder): after each build, it embeds the passages left without one.
type VectorIndex interface {
	UpdateVectors(ctx context.Context, domain string) (search.VectorStats, error)
}

// Indexer builds domains' search indexes from their projects'
// repositories.
type Indexer struct {
	cfg Config

	mu    sync.Mutex
	locks map[string]*sync.Mutex // one build per domain at a time
	built map[string]*memo       // what the last build of each domain read
}

// New returns an Indexer.
func New(cfg Config) *Indexer {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Indexer{cfg: cfg, locks: map[string]*sync.Mutex{}, built: map[string]*memo{}}
}

// IndexResult says what one build read and did.
type IndexResult struct {
	Domain    string
	ProjectID string
	// Ref is the branch read; Commit the commit it pointed at ("" for a
	// plain folder).
	Ref    string
	Commit string
	// LinksSkipped are the symbolic links the build left out, which
	// docsmith never reads through: paths in the repository, or in the
	// docs root of a plain folder.
	LinksSkipped []string
	// Incremental is true when the build read only the files changed
	// since the commit of this indexer's last build of the domain;
	// FullReason says why a build read the whole site instead ("" for the
	// first build of the domain in this process).
	Incremental bool
	FullReason  string
	// FilesRead counts the files read from the repository (0 for a
	// checkout or a plain folder, which are read on disk); PagesChunked
	// the pages cut into chunks.
	FilesRead, PagesChunked int
	search.BuildStats
	// Vectors says what the embedding of passages did, when an embedder
	// is configured.
	Vectors search.VectorStats
}

// Index brings the domain's index up to date with its project's docs at
// the domain's ref: the ref fetched into the repository's mirror and the
// docs read from it (or, for a project whose repository is a plain local
// folder, the folder itself), and only the pages that changed rewritten.
// When this Indexer built the domain before, only the files changed since
// are read. Problems with the repository or the docs are apperr errors
// that say what to fix; a build that fails changes nothing.
func (x *Indexer) Index(ctx context.Context, d tenant.Domain) (IndexResult, error) {
	lock := x.lock(d.ID)
	lock.Lock()
	defer lock.Unlock()
	res, err := x.build(ctx, d)
	if err != nil {
		return res, err
	}
	x.embed(ctx, d, &res)
	return res, nil
}

// embed gives the domain's passages without a vector theirs. A provider
// that fails costs only the dense half of hybrid search on the passages
// left without one: the build stands, BM25 serves them, and the next
// build embeds them.
func (x *Indexer) embed(ctx context.Context, d tenant.Domain, res *IndexResult) {
	vi, ok := x.cfg.Index.(VectorIndex)
	if !ok {
		return
	}
	start := time.Now()
	st, err := vi.UpdateVectors(ctx, d.ID)
	res.Vectors = st
	if err != nil {
		x.cfg.Log.WarnContext(ctx, "index: embedding passages failed; keyword search serves them until the next build",
			"domain", d.ID, "reason", semantic.Reason(err), "embedded", st.Embedded, "missing", st.Missing, "err", err)
		return
	}
	if st.Passages == 0 {
		return // no embedder
	}
	x.cfg.Log.InfoContext(ctx, "index: passages embedded", "domain", d.ID, "passages", st.Passages,
		"embedded", st.Embedded, "requests", st.Requests, "duration", time.Since(start))
}

// build is Index without the embedding, under the domain's lock.
func (x *Indexer) build(ctx context.Context, d tenant.Domain) (IndexResult, error) {
	p, err := x.cfg.Projects.GetProject(ctx, d.ProjectID)
	if err != nil {
		return IndexResult{}, fmt.Errorf("index %s: project %s: %w", d.ID, d.ProjectID, err)
	}
	ref := d.Ref
	if ref == "" {
		ref = p.BaseRef
	}
	res := IndexResult{Domain: d.ID, ProjectID: p.ID, Ref: ref}
	start := time.Now()

	if dir, ok := projectrepo.PlainFolder(p.RepoURL); ok {
		res.Ref = ""
		x.forget(d.ID)
		return x.finish(ctx, d, p, &projectrepo.Docs{Dir: dir}, res, start)
	}
	// The mirror is held while it is read, not while the docs are cut:
	// the other domains of the project read it meanwhile.
	m, err := x.cfg.Repos.OpenMirror(ctx, p)
	if err != nil {
		return IndexResult{}, x.fetchFailed(ctx, d, p, ref, err)
	}
	defer m.Close()

	if prev := x.memo(d.ID); prev != nil {
		if why := prev.differs(p, ref, d.SiteURL); why != "" {
			res.FullReason = why
		} else {
			done, why, err := x.update(ctx, d, p, m, prev, &res)
			if err != nil {
				return IndexResult{}, err
			}
			if done {
				res.Duration = time.Since(start)
				x.logBuilt(ctx, d, p, res)
				return res, nil
			}
			res.FullReason = why
			res.Incremental, res.FilesRead, res.PagesChunked = false, 0, 0
			// update may have let go of the mirror.
			m.Close()
			if m, err = x.cfg.Repos.OpenMirror(ctx, p); err != nil {
				return IndexResult{}, x.fetchFailed(ctx, d, p, ref, err)
			}
			defer m.Close()
		}
	}
	src, err := m.ReadDocs(ctx, ref, projectrepo.DocsWorkspaces+projectrepo.WorkspaceName(d.ID)+"-")
	m.Close()
	if err != nil {
		return IndexResult{}, x.fetchFailed(ctx, d, p, ref, err)
	}
	defer src.Close()
	res.Commit = src.Commit
	if link, ok := projectrepo.LinkOnDocsRoot(src.Links, p.DocsRoot); ok {
		return IndexResult{}, apperr.New(apperr.Conflict, "could not read the docs of project %s at docs root %q: %s is a symbolic link in the repository, and docsmith does not follow symbolic links", p.ID, p.DocsRoot, link)
	}
	return x.finish(ctx, d, p, src, res, start)
}

// fetchFailed says why the repository could not be read (see
// projectrepo.CloneError), and logs what only an operator should see.
func (x *Indexer) fetchFailed(ctx context.Context, d tenant.Domain, p tenant.Project, ref string, err error) error {
	var we projectrepo.WorkDirError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("index %s: %w", d.ID, ctx.Err())
	case errors.As(err, &we):
		return fmt.Errorf("index %s: %w", d.ID, err)
	case isAppErr(err):
		return err // the project's token, already said
	}
	if le := (*gitcli.LocalError)(nil); errors.As(err, &le) {
		x.cfg.Log.ErrorContext(ctx, "index: local failure", "domain", d.ID, "project", p.ID, "op", le.Op, "path", le.Path, "err", le.Err)
	} else {
		x.cfg.Log.WarnContext(ctx, "index: fetch failed", "domain", d.ID, "project", p.ID, "ref", ref, "err", err)
	}
	return projectrepo.CloneError(err, p.ID, ref)
}

// finish reads the whole site from src, writes the pages that changed and
// the catalog, and, for files read from a commit into memory, remembers
// what it read for the next build.
func (x *Indexer) finish(ctx context.Context, d tenant.Domain, p tenant.Project, src *projectrepo.Docs, res IndexResult, start time.Time) (IndexResult, error) {
	res.LinksSkipped = src.Links
	var (
		site   *docs.Site
		chunks []search.Chunk
		rec    *recorder
		err    error
	)
	if src.Tree != nil {
		res.FilesRead = src.Tree.Len()
		var root fs.FS
		if root, err = docs.OpenTree(src.Tree, p.DocsRoot); err != nil {
			err = &search.FolderError{Err: err}
		} else {
			rec = newRecorder(root)
			if site, err = docs.Load(rec); err == nil {
				rec.startChunking()
				chunks = search.Chunks(site, d.SiteURL)
			}
		}
	} else {
		site, chunks, err = search.LoadFolder(src.Dir, p.DocsRoot, d.SiteURL)
	}
	if err != nil {
		return IndexResult{}, docsError(err, p)
	}
	x.logSite(ctx, d, p, site)
	catalog := search.Catalog(site, d.SiteURL)
	res.PagesChunked = len(catalog.Pages)
	// A plain folder's links are real, and the reader refused them; a
	// commit's never reached it.
	res.LinksSkipped = append(slices.Clone(res.LinksSkipped), site.Links...)
	slices.Sort(res.LinksSkipped)
	for _, link := range res.LinksSkipped {
		x.cfg.Log.WarnContext(ctx, "index: symbolic link left out", "domain", d.ID, "project", p.ID, "file", link)
	}
	// The next build must not trust a memory of a build that may have
	// half-failed.
	x.forget(d.ID)
	stats, err := search.BuildChunks(ctx, x.cfg.Index, d.ID, chunks)
	if err != nil {
		return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, err)
	}
	if x.cfg.Catalogs != nil {
		if err := x.cfg.Catalogs.PutCatalog(ctx, d.ID, catalog); err != nil {
			return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, err)
		}
	}
	if rec != nil {
		x.remember(d.ID, newMemo(p, res.Ref, d.SiteURL, src.Commit, site, chunks, catalog, rec))
	}
	stats.Duration = time.Since(start)
	res.BuildStats = stats
	x.logBuilt(ctx, d, p, res)
	return res, nil
}

func (x *Indexer) logSite(ctx context.Context, d tenant.Domain, p tenant.Project, site *docs.Site) {
	for _, path := range site.Missing {
		x.cfg.Log.WarnContext(ctx, "index: navigation page left out", "domain", d.ID, "project", p.ID, "page", path)
	}
	for _, page := range site.Pages {
		var tooLarge *docs.FileTooLargeError
		if errors.As(page.Err, &tooLarge) {
			x.cfg.Log.WarnContext(ctx, "index: page left out", "domain", d.ID, "project", p.ID, "file", page.File, "err", page.Err)
		}
	}
}

func (x *Indexer) logBuilt(ctx context.Context, d tenant.Domain, p tenant.Project, res IndexResult) {
	x.cfg.Log.InfoContext(ctx, "index built", "domain", d.ID, "project", p.ID, "ref", res.Ref, "commit", res.Commit,
		"incremental", res.Incremental, "full_reason", res.FullReason, "files_read", res.FilesRead, "pages_chunked", res.PagesChunked,
		"pages", res.Pages, "chunks", res.Chunks, "changed", res.Changed, "removed", res.Removed, "duration", res.Duration)
}

// docsError says what is wrong with the docs of p, an apperr Conflict.
func docsError(err error, p tenant.Project) error {
	return apperr.Wrap(err, apperr.Conflict, "could not read the docs of project %s at docs root %q: %s", p.ID, p.DocsRoot, DocsProblem(err))
}

func (x *Indexer) lock(domain string) *sync.Mutex {
	x.mu.Lock()
	defer x.mu.Unlock()
	l, ok := x.locks[domain]
	if !ok {
		l = &sync.Mutex{}
		x.locks[domain] = l
	}
	return l
}

// DocsProblem says what is wrong with docs that could not be loaded,
// without naming server paths.
func DocsProblem(err error) string {
	var ce *docs.ConfigError
	var re *search.FolderError
	var tooLarge *docs.FileTooLargeError
	switch {
	case errors.As(err, &re):
		return gitcli.Redact(re.Error())
	case errors.As(err, &tooLarge):
		return tooLarge.Error()
	case errors.Is(err, docs.ErrSymlink):
		return "the navigation config is a symbolic link, which docsmith does not follow"
	case errors.As(err, &ce):
		return ce.Error()
	case errors.Is(err, fs.ErrNotExist):
		return "there is no docs.json or mint.json there"
	}
	return "the files could not be read"
}

// CheckProject reads a project's docs as Index would, without indexing
// them, so that a project can be checked when it is created: the
// repository is reachable (a local path exists), the base branch exists,
// and the docs root holds a docs.json or mint.json that loads. The errors
// are apperr Invalid and say what to fix.
func (x *Indexer) CheckProject(ctx context.Context, p tenant.Project) error {
	if projectrepo.LocalRepo(p.RepoURL) {
		if _, err := os.Stat(p.RepoURL); err != nil {
			return apperr.New(apperr.Invalid, "repo %q: no such directory; give the path of a git repository or of a docs folder", p.RepoURL)
		}
	}
	src := &projectrepo.Docs{}
	if dir, ok := projectrepo.PlainFolder(p.RepoURL); ok {
		src.Dir = dir
	} else {
		m, err := x.cfg.Repos.OpenMirror(ctx, p)
		if err == nil {
			// The check fills the repository's mirror: the first index
			// build fetches only what changed since.
			src, err = m.ReadDocs(ctx, p.BaseRef, "check-"+projectrepo.WorkspaceName(p.ID)+"-")
			m.Close()
		}
		if err != nil {
			if isAppErr(err) {
				return apperr.Wrap(err, apperr.Invalid, "%s", apperr.MessageOf(err))
			}
			if ctx.Err() != nil {
				return fmt.Errorf("check project %s: %w", p.ID, ctx.Err())
			}
			x.cfg.Log.WarnContext(ctx, "check project: fetch failed", "project", p.ID, "ref", p.BaseRef, "err", err)
			return apperr.Wrap(err, apperr.Invalid, "could not clone branch %q of repo %q; check the repo, --ref and the token (git said: %s)",
				p.BaseRef, p.RepoURL, firstLine(err.Error()))
		}
		defer src.Close()
	}
	var err error
	if src.Tree != nil {
		_, _, err = search.LoadTree(src.Tree, p.DocsRoot, "")
	} else {
		_, _, err = search.LoadFolder(src.Dir, p.DocsRoot, "")
	}
	if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "docs root %q of repo %q: %s; set --docs-root to the folder that holds docs.json", p.DocsRoot, p.RepoURL, DocsProblem(err))
	}
	return nil
}

// isAppErr reports whether err already says what to fix.
func isAppErr(err error) bool {
	var ae *apperr.Error
	return errors.As(err, &ae)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
