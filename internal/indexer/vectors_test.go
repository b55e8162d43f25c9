package indexer_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestIndexEmbedsOnlyChangedPassages builds a domain with an embeddings
// provider configured: the first build embeds every passage, an update
// only those it changed, and a provider that fails leaves the build
// standing and its passages for the next one.
func TestIndexEmbedsOnlyChangedPassages(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 32})
	emb, err := semantic.NewEmbedder(config.Embeddings{Model: "words", BaseURL: srv.URL, Batch: 16}, semantic.Deps{})
	must(t, err)

	repo := newWorkRepo(t, os.DirFS("testdata/site"))
	e := setup(t)
	e.index = search.NewMemory(e.store, search.MemoryConfig{Embedder: emb})
	e.svc = assistant.New(assistant.Config{Index: e.index, Threads: e.store, Heartbeat: time.Hour,
		Hybrid: search.Hybrid{Embedder: emb}})
	_, err = e.tenants.CreateProject(ctx, tenant.Project{ID: "repo", OrgID: "acme", RepoURL: repo.dir})
	must(t, err)
	d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: "docs", OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
	must(t, err)
	x := newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir()})

	first, err := x.Index(ctx, d)
	must(t, err)
	if first.Vectors.Passages == 0 || first.Vectors.Embedded != first.Vectors.Passages || srv.TextsEmbedded() != first.Vectors.Embedded {
		t.Fatalf("first build embedded %+v, server saw %d texts", first.Vectors, srv.TextsEmbedded())
	}

	page := "guides/schedules.mdx"
	repo.write(page, strings.Replace(repo.read(page), "## Bandwidth limits\n", "## Bandwidth limits\n\nMind the wombat quota.\n", 1))
	repo.commit("edit one section")
	srv.Reset()
	res, err := x.Index(ctx, d)
	must(t, err)
	if !res.Incremental || res.Vectors.Embedded == 0 || res.Vectors.Embedded > 2 || srv.TextsEmbedded() != res.Vectors.Embedded {
		t.Fatalf("update embedded %+v, server saw %d texts", res.Vectors, srv.TextsEmbedded())
	}
	hits, err := e.svc.Search(ctx, d, assistant.SearchRequest{Query: "wombat quota", PageSize: 3})
	must(t, err)
	if len(hits) == 0 || !strings.HasPrefix(hits[0].URL, siteURL+"/guides/schedules") {
		t.Fatalf("hybrid search after the update = %+v", hits)
	}

	// The provider fails: the build stands, the passage waits.
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailServer})
	repo.write(page, strings.Replace(repo.read(page), "Mind the wombat quota.", "Mind the numbat quota.", 1))
	repo.commit("edit again")
	res, err = x.Index(ctx, d)
	must(t, err)
	if res.Changed != 1 || res.Vectors.Missing == 0 {
		t.Fatalf("update with the provider down = %+v", res)
	}
	hits, err = e.svc.Search(ctx, d, assistant.SearchRequest{Query: "numbat quota", PageSize: 3})
	must(t, err)
	if len(hits) == 0 || !strings.HasPrefix(hits[0].URL, siteURL+"/guides/schedules") {
		t.Fatalf("search with the provider down = %+v", hits)
	}
	srv.SetFault(semantictest.Fault{})
	srv.Reset()
	res, err = x.Index(ctx, d)
	must(t, err)
	if res.Changed != 0 || res.Vectors.Embedded != 1 || res.Vectors.Missing != 0 || srv.TextsEmbedded() != 1 {
		t.Fatalf("the next build = %+v vectors %+v, server saw %d texts", res.BuildStats, res.Vectors, srv.TextsEmbedded())
	}
}
