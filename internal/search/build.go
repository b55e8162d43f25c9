package search

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/docsmith/docsmith/internal/docs"
)

// BuildStats says what Build did.
type BuildStats struct {
	// Pages and Chunks count what the site has now.
	Pages, Chunks int
	// Changed pages were (re)written, Removed pages deleted; the others
	// were left as they were.
	Changed, Removed, Unchanged int
	// ChunksWritten counts the chunks of the changed pages.
	ChunksWritten int
	Duration      time.Duration
}

// FolderError is a docs root that cannot be opened; its message names only
// the docs root, never a server path.
type FolderError struct{ Err error }

func (e *FolderError) Error() string { return e.Err.Error() }
func (e *FolderError) Unwrap() error { return e.Err }

// LoadFolder reads the docs below dir/docsRoot as every index build reads
// them: from a docs root opened inside dir, with no symbolic link followed
// and every file's size capped, and cuts the site into chunks while the root
// is still open (an API page's text comes from an OpenAPI spec read then).
// An error opening the docs root is a *FolderError.
func LoadFolder(dir, docsRoot, siteURL string) (*docs.Site, []Chunk, error) {
	co, err := docs.OpenCheckout(dir, docsRoot)
	if err != nil {
		return nil, nil, &FolderError{Err: err}
	}
	defer func() { _ = co.Close() }()
	return loadDocs(co.FS(), siteURL)
}

// LoadTree is LoadFolder for a repository's files read into memory (see
// gitcli.TreeFS): the same docs root checks, then the same reading.
func LoadTree(tree fs.FS, docsRoot, siteURL string) (*docs.Site, []Chunk, error) {
	root, err := docs.OpenTree(tree, docsRoot)
	if err != nil {
		return nil, nil, &FolderError{Err: err}
	}
	return loadDocs(root, siteURL)
}

func loadDocs(root fs.FS, siteURL string) (*docs.Site, []Chunk, error) {
	site, err := docs.Load(root)
	if err != nil {
		return nil, nil, err
	}
	return site, Chunks(site, siteURL), nil
}

// Build brings a domain's index up to date with the site: pages whose
// content hash changed (or that are new) are rewritten, pages no longer
// indexable are deleted, the rest is not touched. The site's files must
// still be readable (see LoadFolder for a folder).
func Build(ctx context.Context, idx Index, domain string, site *docs.Site, siteURL string) (BuildStats, error) {
	return BuildChunks(ctx, idx, domain, Chunks(site, siteURL))
}

// BuildChunks is Build from a site's chunks.
func BuildChunks(ctx context.Context, idx Index, domain string, chunks []Chunk) (BuildStats, error) {
	start := time.Now()
	old, err := idx.PageHashes(ctx, domain)
	if err != nil {
		return BuildStats{}, fmt.Errorf("build index of %s: %w", domain, err)
	}
	hashes := map[string]string{}
	for _, c := range chunks {
		hashes[c.PagePath] = c.PageHash
	}
	var changed []Chunk
	for _, c := range chunks {
		if old[c.PagePath] != c.PageHash {
			changed = append(changed, c)
		}
	}
	var removed []string
	for p := range old {
		if _, ok := hashes[p]; !ok {
			removed = append(removed, p)
		}
	}
	sort.Strings(removed)
	st := BuildStats{Pages: len(hashes), Chunks: len(chunks), Removed: len(removed), ChunksWritten: len(changed)}
	for p, h := range hashes {
		if old[p] == h {
			st.Unchanged++
		} else {
			st.Changed++
		}
	}
	if len(changed) > 0 || len(removed) > 0 {
		if err := idx.ReplacePages(ctx, domain, changed, removed); err != nil {
			return BuildStats{}, fmt.Errorf("build index of %s: %w", domain, err)
		}
	}
	st.Duration = time.Since(start)
	return st, nil
}
