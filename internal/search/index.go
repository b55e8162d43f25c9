// Package search is retrieval over a docs site as the service runs it: it
// cuts a site's pages into passages (Chunks), keeps each domain's index in
// memory over the store that holds the chunks (Memory), with snapshots for
// a quick start, and turns a reader's question into ranked passages
// (Retriever). The engine it searches with is package engine.
package search

import (
	"context"
	"errors"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// ErrPageNotFound is returned by Index.Page for a page the index does not
// hold.
var ErrPageNotFound = errors.New("page not found in the search index")

// Index stores chunks per domain and searches them.
type Index interface {
	// ReplacePages replaces, in one transaction, every chunk of the pages
	// the chunks belong to with the given chunks, and deletes every chunk
	// of removedPages.
	ReplacePages(ctx context.Context, domain string, chunks []Chunk, removedPages []string) error
	// PageHashes returns each indexed page's PageHash.
	PageHashes(ctx context.Context, domain string) (map[string]string, error)
	// Search returns up to q.Limit hits, best first.
	Search(ctx context.Context, domain string, q Query) ([]Hit, error)
	// Page returns an indexed page's text, or an error wrapping
	// ErrPageNotFound.
	Page(ctx context.Context, domain, path string) (PageText, error)
}

// The engine's types, under the names the rest of docsmith knows them by.
type (
	Chunk    = engine.Chunk
	Filter   = engine.Filter
	Term     = engine.Term
	Query    = engine.Query
	Hit      = engine.Hit
	PageText = engine.PageText
)
