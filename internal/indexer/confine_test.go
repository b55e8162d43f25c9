package indexer_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

const hostSecret = "zebrafishhostsecret"

// hostilePlainFolder is a docs folder whose navigation reaches a host
// directory through symbolic links (absolute, relative out of the folder,
// and one that stays inside it), beside a page far over the size cap.
func hostilePlainFolder(t *testing.T, bigBytes int) string {
	t.Helper()
	base := t.TempDir()
	host := filepath.Join(base, "host")
	dir := filepath.Join(base, "docs")
	must(t, os.MkdirAll(host, 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "real"), 0o755))
	must(t, os.WriteFile(filepath.Join(host, "secret.mdx"), []byte("---\ntitle: Host\n---\n\n"+hostSecret+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "docs.json"), []byte(`{"name":"H","navigation":{"groups":[{"group":"G","pages":["index","big","abs/secret","up/secret","inside/page"]}]}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "index.mdx"), []byte("---\ntitle: Home\n---\n\nWelcome home.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "real", "page.mdx"), []byte("---\ntitle: Real\n---\n\n"+hostSecret+" reached in the folder.\n"), 0o644))
	must(t, os.Symlink(host, filepath.Join(dir, "abs")))
	must(t, os.Symlink("../host", filepath.Join(dir, "up")))
	must(t, os.Symlink("real", filepath.Join(dir, "inside")))
	var b strings.Builder
	b.WriteString("---\ntitle: Big\n---\n\n")
	for i := 0; b.Len() < bigBytes; i++ {
		b.WriteString("## Section\n\nWords that fill a page far larger than any real one.\n\n")
	}
	must(t, os.WriteFile(filepath.Join(dir, "big.mdx"), []byte(b.String()), 0o644))
	return dir
}

func TestIndexRefusesSymlinksAndHugePages(t *testing.T) {
	t.Parallel()
	dir := hostilePlainFolder(t, 3<<20)
	e, x, d := indexEnv(t, dir, "")
	res, err := x.Index(t.Context(), d)
	must(t, err)
	if res.Pages != 1 || res.Chunks > 5 {
		t.Fatalf("build = %+v, want only the home page indexed, in a few chunks", res)
	}
	hits, err := e.svc.Search(t.Context(), d, assistant.SearchRequest{Query: hostSecret, PageSize: 3})
	must(t, err)
	if len(hits) != 0 {
		t.Fatalf("a page reached through a symbolic link was indexed: %+v", hits)
	}
}

func TestIndexRefusesSymlinkedDocsRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	site := hostilePlainFolder(t, 10)
	repo := filepath.Join(base, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	must(t, os.Symlink(site, filepath.Join(repo, "docs")))
	_, x, d := indexEnv(t, repo, "docs")
	_, err := x.Index(t.Context(), d)
	if !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), "symbolic link") || strings.Contains(apperr.MessageOf(err), base) {
		t.Fatalf("docs root through a symbolic link: %v", err)
	}
}

// TestIndexMemoryStaysBounded builds an index from a folder holding a 50 MB
// page: the page is never read, so the build allocates far less than its
// size. It does not run in parallel, so the allocation counter is its own.
func TestIndexMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 50 MB file")
	}
	dir := hostilePlainFolder(t, 50<<20)
	_, x, d := indexEnv(t, dir, "")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := x.Index(t.Context(), d)
	must(t, err)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("indexing allocated %d MiB with a 50 MB page in the folder", alloc>>20)
	}
	if res.Chunks > 5 {
		t.Errorf("build = %+v", res)
	}
}
