package docsite_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsmith/docsmith"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/docsite"
)

// siteFiles lists every file of a docs site, as the validator names them.
func siteFiles(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var files []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// validate runs docsmith's own validator over every file of a site, as
// if each had just changed: the navigation and its $refs, every page's
// front matter and MDX, every link and anchor, the OpenAPI operations of
// the API pages, and the spec itself.
func validate(t *testing.T, fsys fs.FS) []docs.Problem {
	t.Helper()
	return docs.Validate(fsys, siteFiles(t, fsys))
}

// TestDocsSiteValidates is CI's check of docsmith's own docs site: a broken
// page fails it, named with its line and what is wrong.
func TestDocsSiteValidates(t *testing.T) {
	t.Parallel()
	for _, p := range validate(t, docsmith.Docs()) {
		t.Errorf("docs/%s", p)
	}
	site, err := docs.Load(docsmith.Docs())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range site.Missing {
		t.Errorf("docs/docs.json names %s, which has no page", m)
	}
	// Every page file is in the navigation: a page nobody can reach is a
	// page nobody reads.
	inNav := map[string]bool{}
	for _, np := range site.NavPages() {
		inNav[site.Pages[np.Path].File] = true
	}
	for _, f := range siteFiles(t, docsmith.Docs()) {
		if strings.HasSuffix(f, ".mdx") && !inNav[f] {
			t.Errorf("docs/%s is not in docs.json's navigation", f)
		}
	}
}

// TestValidationCatchesBrokenPages: the check above fails on the kinds of
// breakage it is there for.
func TestValidationCatchesBrokenPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, content, want string
	}{
		{"broken link", "quickstart.mdx", "---\ntitle: Q\n---\n\nSee [the setup](/nowhere/setup).\n", "quickstart.mdx:5: link \"/nowhere/setup\""},
		{"unclosed component", "concepts.mdx", "---\ntitle: C\n---\n\n<Note>\nNever closed.\n", "concepts.mdx"},
		{"bad front matter", "index.mdx", "---\ntitle: [unclosed\n---\n\nText.\n", "index.mdx"},
		{"operation not in the spec", "api-reference/agent/create-job.mdx", "---\ntitle: X\nopenapi: POST /v9/nothing\n---\n", "is not in api-reference/openapi.json"},
		{"navigation names a missing page", "docs.json", "", "docs.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := copyFS(t, docsmith.Docs())
			if tt.file == "docs.json" {
				var cfg map[string]any
				if err := json.Unmarshal(fsys["docs.json"].Data, &cfg); err != nil {
					t.Fatal(err)
				}
				tabs := cfg["navigation"].(map[string]any)["tabs"].([]any)
				group := tabs[0].(map[string]any)["groups"].([]any)[0].(map[string]any)
				group["pages"] = append(group["pages"].([]any), "guides/gone")
				fsys["docs.json"].Data, _ = json.Marshal(cfg)
			} else {
				fsys[tt.file] = &fstest.MapFile{Data: []byte(tt.content)}
			}
			problems := validate(t, fsys)
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tt.want) }) {
				t.Errorf("problems %q, want one with %q", got, tt.want)
			}
		})
	}
}

func copyFS(t *testing.T, src fs.FS) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for _, f := range siteFiles(t, src) {
		b, err := fs.ReadFile(src, f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = &fstest.MapFile{Data: b}
	}
	return out
}

// TestGeneratedPagesAreCurrent: the committed configuration reference and
// API reference pages are what the generator makes from the configuration
// table and the OpenAPI document.
func TestGeneratedPagesAreCurrent(t *testing.T) {
	t.Parallel()
	stale, err := docsite.Stale(docsmith.Docs())
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("generated docs pages differ from the configuration table and the OpenAPI document: %s; run `%s` to regenerate them and commit the result",
			strings.Join(stale, ", "), docsite.Regenerate)
	}
}

// TestStaleFindsDrift: a page edited by hand, a page missing and a page of
// an operation that is gone are all reported.
func TestStaleFindsDrift(t *testing.T) {
	t.Parallel()
	fsys := copyFS(t, docsmith.Docs())
	fsys[docsite.ConfigurationPage].Data = append(fsys[docsite.ConfigurationPage].Data, "Edited by hand.\n"...)
	delete(fsys, "api-reference/agent/create-job.mdx")
	fsys["api-reference/agent/old-endpoint.mdx"] = &fstest.MapFile{Data: []byte("---\ntitle: Old\nopenapi: GET /old\n---\n")}
	stale, err := docsite.Stale(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"api-reference/agent/create-job.mdx", "api-reference/agent/old-endpoint.mdx", docsite.ConfigurationPage}
	if !slices.Equal(stale, want) {
		t.Errorf("stale %q, want %q", stale, want)
	}
}

// TestGenerate writes a site's generated files and removes the page of an
// operation that is gone, leaving the hand-written pages alone.
func TestGenerate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := copyDir(dir, docsmith.Docs()); err != nil {
		t.Fatal(err)
	}
	root := dirFS(dir)
	if err := writeFile(dir, "api-reference/agent/old-endpoint.mdx", "---\nopenapi: GET /old\n---\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir, docsite.ConfigurationPage, "stale"); err != nil {
		t.Fatal(err)
	}
	if err := docsite.Generate(dir); err != nil {
		t.Fatal(err)
	}
	stale, err := docsite.Stale(root)
	if err != nil || len(stale) > 0 {
		t.Fatalf("after Generate: stale %q, %v", stale, err)
	}
	if _, err := fs.Stat(root, docsite.APIIntroduction+".mdx"); err != nil {
		t.Errorf("the hand-written introduction: %v", err)
	}
}

// TestConfigurationPage: every option of the table is on the page, with its
// variable, flag and default, and the secret ones say they can come from a
// file.
func TestConfigurationPage(t *testing.T) {
	t.Parallel()
	page, err := fs.ReadFile(docsmith.Docs(), docsite.ConfigurationPage)
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	for _, o := range config.Options() {
		i := strings.Index(text, "\n### "+o.Name+"\n")
		if i < 0 {
			t.Errorf("no section for %s", o.Name)
			continue
		}
		section, _, _ := strings.Cut(text[i+1:], "\n### ")
		for _, want := range []string{"`" + o.Env + "`", "`" + o.Flags[0] + "`"} {
			if !strings.Contains(section, want) {
				t.Errorf("%s: no %s in\n%s", o.Name, want, section)
			}
		}
		if o.Default != "" && !strings.Contains(section, "Default: `"+o.Default+"`") {
			t.Errorf("%s: default %q not in\n%s", o.Name, o.Default, section)
		}
		if o.Secret != strings.Contains(section, "`"+o.Env+"_FILE`") {
			t.Errorf("%s (secret %v): the _FILE variable in\n%s", o.Name, o.Secret, section)
		}
	}
}

// TestAPIReferenceCoversEveryOperation: each operation of the OpenAPI
// document the server serves has an API page that names it, that the
// validator resolves and that the indexer reads.
func TestAPIReferenceCoversEveryOperation(t *testing.T) {
	t.Parallel()
	site, err := docs.Load(docsmith.Docs())
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, np := range site.Indexable() {
		p := site.Pages[np.Path]
		if op, ok := site.Operation(p); ok {
			documented[op.Method+" "+op.Path] = np.Path
			if len(np.Breadcrumb) == 0 || np.Breadcrumb[0] != "API reference" {
				t.Errorf("%s is under %q, want the API reference tab", np.Path, np.Breadcrumb)
			}
		} else if p.OpenAPI != "" {
			t.Errorf("%s: openapi %q does not resolve", np.Path, p.OpenAPI)
		}
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(docsmith.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, item := range doc.Paths {
		for method := range item {
			if !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			n++
			if documented[strings.ToUpper(method)+" "+p] == "" {
				t.Errorf("%s %s has no API reference page", strings.ToUpper(method), p)
			}
		}
	}
	if n < 30 || len(documented) != n {
		t.Errorf("%d operations, %d pages", n, len(documented))
	}
	if _, ok := documented["POST /v2/agent/{projectId}/job"]; !ok || path.Dir(documented["POST /v2/agent/{projectId}/job"]) != "api-reference/agent" {
		t.Errorf("create job's page: %q", documented["POST /v2/agent/{projectId}/job"])
	}
}

func dirFS(dir string) fs.FS { return os.DirFS(dir) }

// copyDir copies src into dir, writable (embedded files are read-only).
func copyDir(dir string, src fs.FS) error {
	if err := os.CopyFS(dir, src); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chmod(p, 0o644)
	})
}

func writeFile(dir, name, content string) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}
