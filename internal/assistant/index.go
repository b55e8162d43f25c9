package assistant

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workspace"
)

// ProjectStore finds the project a domain answers from.
type ProjectStore interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// IndexerConfig is what an Indexer needs.
type IndexerConfig struct {
	Git      *gitcli.Git
	Projects ProjectStore
	Index    search.Index
	// Catalogs receives the page catalog of each build; nil keeps none.
	Catalogs CatalogStore
	// WorkDir holds the short-lived checkouts.
	WorkDir string
	// MirrorDir holds a mirror of each repository read (see
	// gitcli.Mirror), which later builds fetch into; "" is WorkDir's
	// "mirrors".
	MirrorDir string
	// MaxDocsInMemory bounds the files a build reads into memory from a
	// mirror; a docs root larger in all is checked out into WorkDir.
	// Default 64 MiB.
	MaxDocsInMemory int64
	// LookupEnv reads the forge tokens projects name; nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	Log       *slog.Logger
}

// Indexer builds a domain's search index from its project's repository.
type Indexer struct {
	cfg IndexerConfig

	mu    sync.Mutex
	locks map[string]*sync.Mutex // one build per domain at a time
}

// NewIndexer returns an Indexer.
func NewIndexer(cfg IndexerConfig) *Indexer {
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MirrorDir == "" {
		cfg.MirrorDir = filepath.Join(cfg.WorkDir, "mirrors")
	}
	if cfg.MaxDocsInMemory <= 0 {
		cfg.MaxDocsInMemory = DefaultMaxDocsInMemory
	}
	return &Indexer{cfg: cfg, locks: map[string]*sync.Mutex{}}
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
	search.BuildStats
}

// Index brings the domain's index up to date with its project's docs at
// the domain's ref: the ref fetched into the repository's mirror and the
// docs read from it (or, for a project whose repository is a plain local
// folder, the folder itself), and only the pages that changed rewritten.
// Problems with the repository or the docs are apperr Conflict errors that
// say what to fix.
func (x *Indexer) Index(ctx context.Context, d tenant.Domain) (IndexResult, error) {
	lock := x.lock(d.ID)
	lock.Lock()
	defer lock.Unlock()

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

	src := &repoDocs{}
	if dir, ok := plainFolder(p.RepoURL); ok {
		src.dir = dir
		res.Ref = ""
	} else {
		creds, err := credentials(p, x.cfg.LookupEnv)
		if err != nil {
			return IndexResult{}, err
		}
		src, err = x.fetchDocs(ctx, p, ref, creds, indexWorkspaces+workspaceName(d.ID)+"-")
		if err != nil {
			var we workError
			switch {
			case ctx.Err() != nil:
				return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, ctx.Err())
			case errors.As(err, &we):
				return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, err)
			}
			if le := (*gitcli.LocalError)(nil); errors.As(err, &le) {
				x.cfg.Log.ErrorContext(ctx, "index: local failure", "domain", d.ID, "project", p.ID, "op", le.Op, "path", le.Path, "err", le.Err)
			} else {
				x.cfg.Log.WarnContext(ctx, "index: fetch failed", "domain", d.ID, "project", p.ID, "ref", ref, "err", err)
			}
			return IndexResult{}, cloneError(err, p.ID, ref)
		}
		defer src.close()
		res.Commit = src.commit
		res.LinksSkipped = src.links
		if link, ok := linkOnDocsRoot(src.links, p.DocsRoot); ok {
			return IndexResult{}, apperr.New(apperr.Conflict, "could not read the docs of project %s at docs root %q: %s is a symbolic link in the repository, and docsmith does not follow symbolic links", p.ID, p.DocsRoot, link)
		}
	}

	site, chunks, err := src.load(p.DocsRoot, d.SiteURL)
	if err != nil {
		return IndexResult{}, apperr.Wrap(err, apperr.Conflict, "could not read the docs of project %s at docs root %q: %s", p.ID, p.DocsRoot, docsProblem(err))
	}
	for _, path := range site.Missing {
		x.cfg.Log.WarnContext(ctx, "index: navigation page left out", "domain", d.ID, "project", p.ID, "page", path)
	}
	for _, page := range site.Pages {
		var tooLarge *docs.FileTooLargeError
		if errors.As(page.Err, &tooLarge) {
			x.cfg.Log.WarnContext(ctx, "index: page left out", "domain", d.ID, "project", p.ID, "file", page.File, "err", page.Err)
		}
	}
	// A plain folder's links are real, and the reader refused them; a
	// commit's never reached it.
	res.LinksSkipped = append(res.LinksSkipped, site.Links...)
	slices.Sort(res.LinksSkipped)
	for _, link := range res.LinksSkipped {
		x.cfg.Log.WarnContext(ctx, "index: symbolic link left out", "domain", d.ID, "project", p.ID, "file", link)
	}
	stats, err := search.BuildChunks(ctx, x.cfg.Index, d.ID, chunks)
	if err != nil {
		return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, err)
	}
	if x.cfg.Catalogs != nil {
		if err := x.cfg.Catalogs.PutCatalog(ctx, d.ID, search.Catalog(site, d.SiteURL)); err != nil {
			return IndexResult{}, fmt.Errorf("index %s: %w", d.ID, err)
		}
	}
	stats.Duration = time.Since(start)
	res.BuildStats = stats
	x.cfg.Log.InfoContext(ctx, "index built", "domain", d.ID, "project", p.ID, "ref", res.Ref, "commit", res.Commit,
		"pages", stats.Pages, "chunks", stats.Chunks, "changed", stats.Changed, "removed", stats.Removed, "duration", stats.Duration)
	return res, nil
}

// DefaultMaxDocsInMemory is IndexerConfig.MaxDocsInMemory's default: a
// large docs site (mintlify's, 980 pages) takes 11 MB.
const DefaultMaxDocsInMemory = 64 << 20

// repoDocs is what a build reads the docs from: a repository's files at
// one commit, in memory (tree) or checked out in a workspace (dir), or a
// plain folder (dir).
type repoDocs struct {
	commit string
	tree   *gitcli.TreeFS
	dir    string
	ws     *workspace.Dir
	links  []string // symbolic links of the commit left out
}

func (r *repoDocs) load(docsRoot, siteURL string) (*docs.Site, []search.Chunk, error) {
	if r.tree != nil {
		return search.LoadTree(r.tree, docsRoot, siteURL)
	}
	return search.LoadFolder(r.dir, docsRoot, siteURL)
}

func (r *repoDocs) close() {
	if r.ws != nil {
		_ = r.ws.Remove()
	}
}

// workError is a failure of this server's work directory, not of the
// repository.
type workError struct{ error }

func (e workError) Unwrap() error { return e.error }

// fetchDocs fetches ref of the project's repository into its mirror and
// reads the files of its tip that a build may read: those in the docs root
// (and the entries on the way to it, so that a docs root that is a link is
// seen as one) no larger than the largest file the docs loader reads. They
// are read into memory, or, over MaxDocsInMemory in all, checked out into
// a new workspace named with prefix.
func (x *Indexer) fetchDocs(ctx context.Context, p tenant.Project, ref string, creds *gitcli.Credentials, prefix string) (*repoDocs, error) {
	m, err := x.cfg.Git.OpenMirror(ctx, x.cfg.MirrorDir, p.RepoURL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.Close() }()
	root := strings.Trim(path.Clean("/"+strings.TrimSpace(p.DocsRoot)), "/")
	large := map[string]int64{}
	// A set: keep runs again when a read is retried or falls back to a
	// checkout.
	links := map[string]bool{}
	keep := func(f gitcli.TreeFile) bool {
		if root != "" && f.Path != root && !strings.HasPrefix(f.Path, root+"/") && !strings.HasPrefix(root, f.Path+"/") {
			return false
		}
		if !f.Regular() {
			links[f.Path] = true
			return false
		}
		if f.Size > docs.MaxSpecBytes {
			large[f.Path] = f.Size
			return false
		}
		return true
	}
	defer func() {
		for file, size := range large {
			x.cfg.Log.WarnContext(ctx, "index: file left out", "project", p.ID, "file", file, "bytes", size, "limit", docs.MaxSpecBytes)
		}
	}()
	commit, tree, err := m.ReadBranch(ctx, ref, creds, keep, x.cfg.MaxDocsInMemory)
	if err == nil {
		return &repoDocs{commit: commit, tree: tree, links: slices.Sorted(maps.Keys(links))}, nil
	}
	if !errors.Is(err, gitcli.ErrTreeTooLarge) {
		return nil, err
	}
	// Checkouts of builds killed with an earlier process go first.
	if _, err := workspace.Sweep(x.cfg.WorkDir, indexWorkspaces, x.cfg.Log); err != nil {
		x.cfg.Log.WarnContext(ctx, "index: sweeping stale workspaces failed", "err", err)
	}
	ws, err := workspace.Create(x.cfg.WorkDir, prefix)
	if err != nil {
		return nil, workError{fmt.Errorf("work directory: %w", err)}
	}
	dir := filepath.Join(ws.Path, "repo")
	if commit, err = m.CheckoutBranch(ctx, ref, dir, creds, keep); err != nil {
		_ = ws.Remove()
		return nil, err
	}
	return &repoDocs{commit: commit, dir: dir, ws: ws, links: slices.Sorted(maps.Keys(links))}, nil
}

// linkOnDocsRoot finds, among a commit's symbolic links, one that is the
// docs root or a directory on the way to it: left out of the files read, it
// would otherwise be reported as a docs root that does not exist.
func linkOnDocsRoot(links []string, docsRoot string) (string, bool) {
	root := strings.Trim(path.Clean("/"+strings.TrimSpace(docsRoot)), "/")
	for _, l := range links {
		if root == l || strings.HasPrefix(root, l+"/") {
			return l, true
		}
	}
	return "", false
}

// indexWorkspaces starts the name of every build's workspace.
const indexWorkspaces = "index-"

// workspaceName keeps the characters of a domain ID that are safe in a
// directory name.
func workspaceName(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, id)
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

// plainFolder reports whether repo is a local directory that is not a git
// repository (neither a work tree nor a bare one): its files are read as
// they are, with no clone and no ref.
func plainFolder(repo string) (string, bool) {
	if strings.Contains(repo, "://") {
		return "", false
	}
	info, err := os.Stat(repo)
	if err != nil || !info.IsDir() {
		return "", false
	}
	for _, marker := range []string{".git", "HEAD"} {
		if _, err := os.Stat(filepath.Join(repo, marker)); err == nil {
			return "", false
		}
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", false
	}
	return abs, true
}

// docsProblem says what is wrong with the docs without naming server paths.
func docsProblem(err error) string {
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

// credentials reads the project's forge token from the variable or file it
// names; a project that names none clones without.
func credentials(p tenant.Project, lookupEnv func(string) (string, bool)) (*gitcli.Credentials, error) {
	var token string
	switch {
	case p.TokenEnv != "":
		v, ok := lookupEnv(p.TokenEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, apperr.New(apperr.Conflict, "the token variable %s named by project %s is not set", p.TokenEnv, p.ID)
		}
		token = strings.TrimSpace(v)
	case p.TokenFile != "":
		b, err := os.ReadFile(p.TokenFile)
		if err != nil {
			return nil, apperr.Wrap(err, apperr.Conflict, "the token file named by project %s could not be read", p.ID)
		}
		token = strings.TrimSpace(string(b))
	default:
		return nil, nil
	}
	user := "x-access-token"
	if p.ForgeKind == tenant.ForgeGitLab {
		user = "oauth2"
	}
	return &gitcli.Credentials{Username: user, Password: token}, nil
}

// cloneError says why the repository of a project could not be cloned: a
// repository or ref refused before git ran, or a branch the repository
// does not have, is the project's configuration (409); git failing to
// reach or fetch it is the repository's side (502, with what git reported,
// which holds no credentials); a full disk here is ours (507), and so is
// any other failure of our own files (503, the path in the log only).
func cloneError(err error, project, ref string) error {
	if errors.Is(err, gitcli.ErrInvalidArgument) {
		return apperr.Wrap(err, apperr.Conflict,
			"could not clone branch %q of the repository of project %s; check its repo, ref and token: %v", ref, project, err)
	}
	var ge *gitcli.Error
	said := ""
	if errors.As(err, &ge) {
		said = ge.Stderr
	}
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(said, "No space left on device") {
		return apperr.Wrap(err, apperr.StorageFull, "the server's disk is full: the repository of project %s could not be cloned", project)
	}
	var le *gitcli.LocalError
	if errors.As(err, &le) {
		// This server's own files failed: nothing the project can fix.
		return apperr.Wrap(err, apperr.Unavailable,
			"the server could not write its mirror of the repository of project %s; an operator must check the data directory (the server log names the path)", project)
	}
	if strings.Contains(said, "Remote branch") && strings.Contains(said, "not found") || strings.Contains(said, "couldn't find remote ref") {
		// The repository answered: the domain's ref is the operator's to fix.
		return apperr.Wrap(err, apperr.Conflict, "could not clone branch %q of the repository of project %s: the repository has no such branch", ref, project)
	}
	if said == "" {
		said = "git did not finish (the server log has the cause)"
	}
	return apperr.Wrap(err, apperr.BadGateway,
		"the repository of project %s could not be reached at branch %q; check that it is up and the project's repo, ref and token are right; git said: %s",
		project, ref, clipLine(said, 400))
}

// clipLine joins s's lines and cuts it to at most n bytes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// CheckProject reads a project's docs as Index would, without indexing
// them, so that a project can be checked when it is created: the
// repository is reachable (a local path exists), the base branch exists,
// and the docs root holds a docs.json or mint.json that loads. The errors
// are apperr Invalid and say what to fix.
func (x *Indexer) CheckProject(ctx context.Context, p tenant.Project) error {
	if LocalRepo(p.RepoURL) {
		if _, err := os.Stat(p.RepoURL); err != nil {
			return apperr.New(apperr.Invalid, "repo %q: no such directory; give the path of a git repository or of a docs folder", p.RepoURL)
		}
	}
	docsSrc := &repoDocs{}
	if dir, ok := plainFolder(p.RepoURL); ok {
		docsSrc.dir = dir
	} else {
		creds, err := credentials(p, x.cfg.LookupEnv)
		if err != nil {
			return apperr.Wrap(err, apperr.Invalid, "%s", apperr.MessageOf(err))
		}
		// The check fills the repository's mirror: the first index build
		// fetches only what changed since.
		src, err := x.fetchDocs(ctx, p, p.BaseRef, creds, "check-"+workspaceName(p.ID)+"-")
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("check project %s: %w", p.ID, ctx.Err())
			}
			x.cfg.Log.WarnContext(ctx, "check project: fetch failed", "project", p.ID, "ref", p.BaseRef, "err", err)
			return apperr.Wrap(err, apperr.Invalid, "could not clone branch %q of repo %q; check the repo, --ref and the token (git said: %s)",
				p.BaseRef, p.RepoURL, firstLine(err.Error()))
		}
		defer src.close()
		docsSrc = src
	}
	if _, _, err := docsSrc.load(p.DocsRoot, ""); err != nil {
		return apperr.Wrap(err, apperr.Invalid, "docs root %q of repo %q: %s; set --docs-root to the folder that holds docs.json", p.DocsRoot, p.RepoURL, docsProblem(err))
	}
	return nil
}

// LocalRepo reports whether a project's repo is a path on this machine
// rather than a URL (scheme://… or git's user@host:path).
func LocalRepo(repo string) bool {
	if strings.Contains(repo, "://") {
		return false
	}
	if i := strings.IndexByte(repo, ':'); i > 0 && !strings.ContainsRune(repo[:i], '/') {
		return false // host:path, git's scp-like syntax
	}
	return true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
