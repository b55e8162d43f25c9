package indexer

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Updating a domain's index from the files changed since its last build.
//
// A build is a function of the files it touches: the config and its $ref
// files, the page files the navigation names (and the names it tried for
// each page), and, while the pages are cut into chunks, the snippets and
// OpenAPI specs they include. A recorder notes every path the build
// touches, in two sets: while the site loads and while it is cut. For a
// file changed between the last build's commit and the new one:
//
//   - a file cutting touched (a snippet, a spec) → the whole site is read:
//     any page may include it;
//   - the file of a page, edited or removed → that page is read and cut
//     again (a page whose file is gone leaves the index, unless another
//     name its entry allows has a file: then everything is read);
//   - any other file loading touched (the config, a $ref, a name tried for
//     a page that had no file) → the whole site is read: the navigation,
//     or which file a page is, may have changed;
//   - a file no build touched (an image, a page no navigation names) → no
//     effect.
//
// The pages read again are loaded with the config (docs.LoadPages) from
// the few files they need; their chunks replace theirs, the other pages'
// are left as the index holds them. Should the update touch a file it did
// not read, it reads the whole site instead; so does any doubt: the
// domain's settings changed, the last commit is gone from the mirror, or
// the index does not hold what the last build wrote (another process
// wrote it since).

// memo is what an Indexer remembers of a domain's last build.
type memo struct {
	commit, ref, repoURL, docsRoot, siteURL string

	loadReads  map[string]bool     // paths touched while the site loaded
	chunkReads map[string]bool     // paths touched while it was cut
	pageFiles  map[string][]string // file → the navigation paths it is the page of
	pages      []pageMemo          // the navigation's pages with a file, in order
	name, desc string              // the catalog's
}

// pageMemo is one page of a memo.
type pageMemo struct {
	path, file string
	// hash and chunks are its chunks' PageHash and count, entry its catalog
	// entry; all empty for a page the index leaves out.
	hash   string
	chunks int
	entry  *search.CatalogPage
}

func newMemo(p tenant.Project, ref, siteURL, commit string, site *docs.Site, chunks []search.Chunk, catalog search.SiteCatalog, rec *recorder) *memo {
	m := &memo{
		commit: commit, ref: ref, repoURL: p.RepoURL, docsRoot: p.DocsRoot, siteURL: siteURL,
		loadReads: rec.loaded, chunkReads: rec.cut, pageFiles: map[string][]string{},
		name: catalog.Name, desc: catalog.Description,
	}
	counts := map[string]int{}
	hashes := map[string]string{}
	for _, c := range chunks {
		counts[c.PagePath]++
		hashes[c.PagePath] = c.PageHash
	}
	entries := map[string]*search.CatalogPage{}
	for i := range catalog.Pages {
		entries[catalog.Pages[i].Path] = &catalog.Pages[i]
	}
	for _, np := range site.NavPages() {
		pg := site.Pages[np.Path]
		m.pageFiles[pg.File] = append(m.pageFiles[pg.File], np.Path)
		m.pages = append(m.pages, pageMemo{path: np.Path, file: pg.File, hash: hashes[np.Path], chunks: counts[np.Path], entry: entries[np.Path]})
	}
	return m
}

// differs says why the memo cannot be updated for a build of p at ref for
// siteURL, "" when it can.
func (m *memo) differs(p tenant.Project, ref, siteURL string) string {
	switch {
	case m.repoURL != p.RepoURL:
		return "the project's repository changed"
	case m.ref != ref:
		return "the domain's branch changed"
	case m.docsRoot != p.DocsRoot:
		return "the project's docs root changed"
	case m.siteURL != siteURL:
		return "the domain's site URL changed"
	}
	return ""
}

// hashes is the page hashes the index holds after the memo's build.
func (m *memo) hashes() map[string]string {
	h := map[string]string{}
	for _, pg := range m.pages {
		if pg.hash != "" {
			h[pg.path] = pg.hash
		}
	}
	return h
}

func (x *Indexer) memo(domain string) *memo {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.built[domain]
}

// maxRemembered bounds the domains an Indexer remembers the last build
// of (a memo of a 1,000-page site is a few hundred KB); a domain
// forgotten is read whole by its next build.
const maxRemembered = 256

func (x *Indexer) remember(domain string, m *memo) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.built[domain]; !ok && len(x.built) >= maxRemembered {
		for other := range x.built {
			delete(x.built, other) // any one: memos are only a saving
			break
		}
	}
	x.built[domain] = m
}

func (x *Indexer) forget(domain string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.built, domain)
}

// update brings the domain's index from prev's commit to the tip of its
// ref, reading only what changed; it closes m once it has read. done is false, with why, when the whole
// site must be read instead; err is a failure to fetch, or to write the
// index, after which nothing changed.
func (x *Indexer) update(ctx context.Context, d tenant.Domain, p tenant.Project, m *projectrepo.Mirror, prev *memo, res *IndexResult) (done bool, why string, err error) {
	commit, err := m.Fetch(ctx, prev.ref)
	if err != nil {
		return false, "", x.fetchFailed(ctx, d, p, prev.ref, err)
	}
	res.Commit = commit
	stored, err := x.cfg.Index.PageHashes(ctx, d.ID)
	if err != nil {
		return false, "", fmt.Errorf("index %s: %w", d.ID, err)
	}
	if !maps.Equal(stored, prev.hashes()) {
		return false, "the index does not hold what this process built last", nil
	}
	repage := map[string]bool{} // navigation paths to read again
	gone := map[string]bool{}   // page files removed
	if commit != prev.commit {
		changes, err := m.Changes(ctx, prev.commit, commit)
		if err != nil {
			x.cfg.Log.WarnContext(ctx, "index: changes unknown, reading everything", "domain", d.ID, "from", prev.commit, "to", commit, "err", err)
			return false, "the commit indexed before is not in the mirror", nil
		}
		for _, c := range changes {
			paths, isPage := prev.pageFiles[c.Path]
			switch {
			case c.Path == "":
				return false, "the path to the docs root changed", nil
			case prev.chunkReads[c.Path]:
				return false, "a file pages include changed: " + c.Path, nil
			case isPage:
				// Edited, or removed: read again, a page removed is gone
				// unless another of the names its entry allows has a file.
				for _, np := range paths {
					repage[np] = true
				}
				if c.Blob == "" {
					gone[c.Path] = true
				}
			case prev.loadReads[c.Path]:
				return false, "the navigation changed: " + c.Path, nil
			}
		}
	}
	if len(repage) == 0 {
		// Nothing the index shows changed.
		x.remember(d.ID, prev.at(commit))
		res.Incremental = true
		res.BuildStats = prev.stats()
		return true, "", nil
	}

	// What the pages read again may need: what loading touched, but the
	// other pages' files, what cutting touched, and their own files.
	want := map[string]bool{}
	for path := range prev.loadReads {
		if _, isPage := prev.pageFiles[path]; !isPage {
			want[path] = true
		}
	}
	maps.Copy(want, prev.chunkReads)
	for _, pg := range prev.pages {
		if repage[pg.path] {
			want[pg.file] = true
		}
	}
	src, err := m.ReadFiles(ctx, commit, func(rel string) bool { return want[rel] })
	m.Close() // all read
	if err != nil {
		x.cfg.Log.WarnContext(ctx, "index: changed files unreadable, reading everything", "domain", d.ID, "commit", commit, "err", err)
		return false, "the changed files could not be read", nil
	}
	res.FilesRead = src.Tree.Len()
	if _, ok := projectrepo.LinkOnDocsRoot(src.Links, p.DocsRoot); ok {
		return false, "the docs root is a symbolic link", nil
	}
	root, err := docs.OpenTree(src.Tree, p.DocsRoot)
	if err != nil {
		return false, "the docs root could not be opened", nil //nolint:nilerr // the full build that follows reports it
	}
	rec := newRecorder(root)
	site, err := docs.LoadPages(rec, func(np string) bool { return repage[np] })
	if err != nil {
		return false, "the config could not be read", nil //nolint:nilerr // the full build that follows reports it
	}
	rec.startChunking()
	chunks := search.Chunks(site, d.SiteURL)
	catalog := search.Catalog(site, d.SiteURL)
	for path := range rec.all() {
		if _, inCommit := src.Files[path]; inCommit && !want[path] {
			return false, "a page changed needs a file not read: " + path, nil
		}
	}
	for _, pg := range prev.pages {
		if !repage[pg.path] {
			continue
		}
		now := site.Pages[pg.path]
		switch {
		case now == nil && !gone[pg.file]:
			return false, "a page could not be read again: " + pg.path, nil
		case now != nil && now.File != pg.file:
			return false, "a page's file changed: " + pg.path, nil
		}
	}
	x.logSite(ctx, d, p, site)
	res.LinksSkipped = src.Links
	res.PagesChunked = len(catalog.Pages)

	next := prev.at(commit)
	next.pages = make([]pageMemo, 0, len(prev.pages))
	next.chunkReads = maps.Clone(prev.chunkReads)
	maps.Copy(next.chunkReads, rec.cut)
	byPage := map[string][]search.Chunk{}
	for _, c := range chunks {
		byPage[c.PagePath] = append(byPage[c.PagePath], c)
	}
	entries := map[string]*search.CatalogPage{}
	for i := range catalog.Pages {
		entries[catalog.Pages[i].Path] = &catalog.Pages[i]
	}
	var written []search.Chunk
	var removed []string
	st := search.BuildStats{}
	catalogChanged := false
	if len(gone) > 0 {
		next.pageFiles = maps.Clone(prev.pageFiles)
	}
	for _, pg := range prev.pages {
		if !repage[pg.path] {
			next.pages = append(next.pages, pg)
			continue
		}
		cs := byPage[pg.path]
		hash := ""
		if len(cs) > 0 {
			hash = cs[0].PageHash
		}
		switch {
		case hash == pg.hash:
		case hash == "":
			removed = append(removed, pg.path)
		default:
			written = append(written, cs...)
			st.Changed++
		}
		if !sameEntry(pg.entry, entries[pg.path]) {
			catalogChanged = true
		}
		if site.Pages[pg.path] == nil {
			// Gone: a later build that finds a file for it again
			// reads everything (the names tried stay in loadReads).
			delete(next.pageFiles, pg.file)
			continue
		}
		next.pages = append(next.pages, pageMemo{path: pg.path, file: pg.file, hash: hash, chunks: len(cs), entry: entries[pg.path]})
	}
	slices.Sort(removed)
	if len(written) > 0 || len(removed) > 0 {
		if err := x.cfg.Index.ReplacePages(ctx, d.ID, written, removed); err != nil {
			return false, "", fmt.Errorf("index %s: %w", d.ID, err)
		}
	}
	if catalogChanged && x.cfg.Catalogs != nil {
		if err := x.cfg.Catalogs.PutCatalog(ctx, d.ID, next.catalog()); err != nil {
			// The pages are written; the next build reads everything.
			x.forget(d.ID)
			return false, "", fmt.Errorf("index %s: %w", d.ID, err)
		}
	}
	x.remember(d.ID, next)
	total := next.stats()
	st.Pages, st.Chunks, st.Removed, st.ChunksWritten = total.Pages, total.Chunks, len(removed), len(written)
	st.Unchanged = st.Pages - st.Changed
	res.BuildStats = st
	res.Incremental = true
	return true, "", nil
}

// at is a copy of the memo for commit, sharing what it does not change.
func (m *memo) at(commit string) *memo {
	n := *m
	n.commit = commit
	return &n
}

// stats counts the memo's pages and chunks as if its build had changed
// nothing.
func (m *memo) stats() search.BuildStats {
	var st search.BuildStats
	for _, pg := range m.pages {
		if pg.hash != "" {
			st.Pages++
			st.Chunks += pg.chunks
		}
	}
	st.Unchanged = st.Pages
	return st
}

// catalog is the catalog of the memo's pages.
func (m *memo) catalog() search.SiteCatalog {
	c := search.SiteCatalog{Name: m.name, Description: m.desc, Pages: []search.CatalogPage{}}
	for _, pg := range m.pages {
		if pg.entry != nil {
			c.Pages = append(c.Pages, *pg.entry)
		}
	}
	return c
}

func sameEntry(a, b *search.CatalogPage) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && a.Title == b.Title && a.URL == b.URL && a.Description == b.Description &&
		slices.Equal(a.Section, b.Section) && a.Version == b.Version && a.Language == b.Language && slices.Equal(a.Groups, b.Groups)
}

// recorder is a docs root that notes every path read or looked at through
// it, in loaded until startChunking, then in cut.
type recorder struct {
	fsys fs.FS

	mu       sync.Mutex
	loaded   map[string]bool
	cut      map[string]bool
	chunking bool
}

func newRecorder(fsys fs.FS) *recorder {
	return &recorder{fsys: fsys, loaded: map[string]bool{}, cut: map[string]bool{}}
}

var (
	_ fs.StatFS     = (*recorder)(nil)
	_ fs.ReadFileFS = (*recorder)(nil)
)

func (r *recorder) startChunking() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunking = true
}

func (r *recorder) note(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chunking {
		r.cut[name] = true
	} else {
		r.loaded[name] = true
	}
}

// all is every path noted.
func (r *recorder) all() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := maps.Clone(r.loaded)
	maps.Copy(out, r.cut)
	return out
}

func (r *recorder) Open(name string) (fs.File, error) {
	r.note(name)
	return r.fsys.Open(name)
}

func (r *recorder) Stat(name string) (fs.FileInfo, error) {
	r.note(name)
	return fs.Stat(r.fsys, name)
}

func (r *recorder) ReadFile(name string) ([]byte, error) {
	r.note(name)
	return fs.ReadFile(r.fsys, name)
}
