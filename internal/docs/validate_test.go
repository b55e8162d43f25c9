package docs

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// allFiles lists every file of a file system.
func allFiles(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var files []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestValidateCleanSite(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("testdata/kettle")
	if problems := Validate(fsys, allFiles(t, fsys)); len(problems) != 0 {
		t.Errorf("Validate on a clean site found:\n%s", problemList(problems))
	}
	if problems := Validate(fsys, nil); len(problems) != 0 {
		t.Errorf("Validate with nothing changed found:\n%s", problemList(problems))
	}
}

func problemList(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

// wantProblem is a problem Validate must report: in File, on Line (0: any
// line), with a message containing Text.
type wantProblem struct {
	File string
	Line int
	Text string
}

func TestValidate(t *testing.T) {
	t.Parallel()
	write := func(name, data string) func(fstest.MapFS) {
		return func(m fstest.MapFS) { m[name] = &fstest.MapFile{Data: []byte(data)} }
	}
	replace := func(name, old, new string) func(fstest.MapFS) {
		return func(m fstest.MapFS) {
			s := string(m[name].Data)
			if !strings.Contains(s, old) {
				panic(name + " does not contain " + old)
			}
			m[name] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
		}
	}
	remove := func(name string) func(fstest.MapFS) {
		return func(m fstest.MapFS) { delete(m, name) }
	}
	tests := []struct {
		name    string
		edits   []func(fstest.MapFS)
		changed []string
		want    []wantProblem // exactly these, in order
	}{
		{
			name:    "front matter that is not YAML",
			edits:   []func(fstest.MapFS){replace("guides/descaling.mdx", "description: Remove limescale.", "description: Remove it: now")},
			changed: []string{"guides/descaling.mdx"},
			want:    []wantProblem{{"guides/descaling.mdx", 3, "put quotes around"}},
		},
		{
			name:    "front matter never closed",
			edits:   []func(fstest.MapFS){write("guides/descaling.mdx", "---\ntitle: Descaling\n\nText.\n")},
			changed: []string{"guides/descaling.mdx"},
			want:    []wantProblem{{"guides/descaling.mdx", 1, "never closed"}},
		},
		{
			name:    "front matter that is a list",
			edits:   []func(fstest.MapFS){replace("guides/descaling.mdx", "title: Descaling\ndescription: Remove limescale.", "- Descaling")},
			changed: []string{"/guides/descaling.mdx"},
			want:    []wantProblem{{"guides/descaling.mdx", 2, "key: value"}},
		},
		{
			name:    "an element never closed",
			edits:   []func(fstest.MapFS){replace("guides/descaling.mdx", "## Steps", "<Note>\nWear gloves.\n\n## Steps")},
			changed: []string{"guides/descaling.mdx"},
			want:    []wantProblem{{"guides/descaling.mdx", 10, "<Note> is never closed"}},
		},
		{
			name:    "MDX problems in a page with broken front matter are still found",
			edits:   []func(fstest.MapFS){write("guides/descaling.mdx", "---\ntitle: [\n---\n\n<!-- draft -->\n")},
			changed: []string{"guides/descaling.mdx"},
			want: []wantProblem{
				{"guides/descaling.mdx", 2, "front matter"},
				{"guides/descaling.mdx", 5, "HTML comments"},
				// Links elsewhere to #steps and #before-you-start now fail too.
				{"guides/orphan.mdx", 5, "#steps"},
				{"index.mdx", 7, "#before-you-start"},
			},
		},
		{
			name:    "a code block never closed in a page without front matter",
			edits:   []func(fstest.MapFS){write("guides/new.mdx", "# New\n\n```bash\nbrew\n")},
			changed: []string{"guides/new.mdx"},
			want:    []wantProblem{{"guides/new.mdx", 3, "never closed"}},
		},
		{
			name:    "docs.json that is not JSON",
			edits:   []func(fstest.MapFS){replace("docs.json", `"theme": "mint",`, `"theme": "mint"`)},
			changed: []string{"docs.json"},
			want:    []wantProblem{{"docs.json", 4, "invalid JSON"}},
		},
		{
			name:    "a $ref file that is not JSON",
			edits:   []func(fstest.MapFS){replace("fr.json", `"language": "fr",`, `"language": "fr"`)},
			changed: []string{"fr.json"},
			want:    []wantProblem{{"fr.json", 3, "invalid JSON"}},
		},
		{
			name:    "navigation names a page that does not exist",
			edits:   []func(fstest.MapFS){replace("docs.json", `"guides/drafts",`, `"guides/drafts", "guides/new-page",`)},
			changed: []string{"docs.json"},
			want:    []wantProblem{{"docs.json", 36, `names page "guides/new-page"`}},
		},
		{
			name:    "navigation in a $ref file names a page that does not exist",
			edits:   []func(fstest.MapFS){replace("fr.json", `"fr/quickstart"`, `"fr/quickstart", "fr/faq"`)},
			changed: []string{"fr.json"},
			want:    []wantProblem{{"fr.json", 4, `names page "fr/faq"`}},
		},
		{
			name:    "a deleted page still in the navigation and linked to",
			edits:   []func(fstest.MapFS){remove("guides/descaling.mdx")},
			changed: []string{"guides/descaling.mdx"},
			want: []wantProblem{
				{"docs.json", 36, `names page "guides/descaling"`},
				{"guides/brewing/index.mdx", 7, "no longer exists"},
				{"guides/orphan.mdx", 5, "no longer exists"},
				{"index.mdx", 7, "no longer exists"},
			},
		},
		{
			name:    "broken links in a changed page",
			edits:   []func(fstest.MapFS){replace("guides/descaling.mdx", "## Steps", "See [setup](/guides/setup), [a photo](/images/scale.png) and [up](../../../x).\n\n## Steps")},
			changed: []string{"guides/descaling.mdx"},
			want: []wantProblem{
				{"guides/descaling.mdx", 10, `"../../../x" leads outside the docs root`},
				{"guides/descaling.mdx", 10, `"/guides/setup": there is no page guides/setup.mdx`},
				{"guides/descaling.mdx", 10, "there is no file images/scale.png"},
			},
		},
		{
			name:    "broken links in unchanged pages are not reported",
			edits:   []func(fstest.MapFS){replace("guides/internals.mdx", "relay.", "[relay](/relay)."), replace("guides/archive.mdx", "flash.", "flash (see [x](/x)).")},
			changed: []string{"guides/archive.mdx"},
			want:    []wantProblem{{"guides/archive.mdx", 6, `"/x"`}},
		},
		{
			name:    "an anchor that is not a heading of the target",
			edits:   []func(fstest.MapFS){replace("recipes/green-tea.mdx", "#green-tea", "#white-tea")},
			changed: []string{"recipes/green-tea.mdx"},
			want:    []wantProblem{{"recipes/green-tea.mdx", 5, "/guides/brewing/temperatures has no heading with anchor #white-tea (it has #black-tea, #green-tea, #herbal-infusions)"}},
		},
		{
			name:    "an anchor on the same page",
			edits:   []func(fstest.MapFS){replace("guides/descaling.mdx", "1. Fill", "Go [back](#before-you-begin).\n\n1. Fill")},
			changed: []string{"guides/descaling.mdx"},
			want:    []wantProblem{{"guides/descaling.mdx", 12, "this page has no heading with anchor #before-you-begin"}},
		},
		{
			name:    "a renamed heading breaks links from unchanged pages",
			edits:   []func(fstest.MapFS){replace("guides/brewing/temperatures.mdx", "## Green tea", "## Green and white tea")},
			changed: []string{"guides/brewing/temperatures.mdx"},
			want: []wantProblem{
				{"quickstart.mdx", 11, "has no heading with anchor #green-tea"},
				{"recipes/green-tea.mdx", 5, "has no heading with anchor #green-tea"},
			},
		},
		{
			name:    "anchors of unchanged targets from unchanged pages are not checked",
			edits:   []func(fstest.MapFS){replace("recipes/green-tea.mdx", "#green-tea", "#white-tea")},
			changed: []string{"guides/descaling.mdx"},
		},
		{
			name:    "an operation that is not in the spec",
			edits:   []func(fstest.MapFS){replace("api/list-kettles.mdx", "GET /kettles", "GET /teapots")},
			changed: []string{"api/list-kettles.mdx"},
			want:    []wantProblem{{"api/list-kettles.mdx", 3, "GET /teapots is not in api/kettle.yaml"}},
		},
		{
			name:    "a spec that does not parse",
			edits:   []func(fstest.MapFS){replace("api/kettle.yaml", "  title: Kettle API", "  title: Kettle: API")},
			changed: []string{"api/kettle.yaml"},
			want:    []wantProblem{{"api/kettle.yaml", 3, "invalid YAML"}},
		},
		{
			name:    "a JSON spec that does not parse",
			edits:   []func(fstest.MapFS){replace("api/events.json", `"openapi": "3.1.0",`, `"openapi": "3.1.0"`)},
			changed: []string{"api/events.json"},
			want:    []wantProblem{{"api/events.json", 3, "invalid JSON"}},
		},
		{
			name:    "README.md is not a page",
			edits:   []func(fstest.MapFS){write("README.md", "---\nbroken: [\n---\n[x](/nowhere)\n")},
			changed: []string{"README.md"},
		},
		{
			name:    "a new page that is not in the navigation is fine",
			edits:   []func(fstest.MapFS){write("guides/new.md", "---\ntitle: New\n---\n\nSee [descaling](/guides/descaling#steps).\n")},
			changed: []string{"guides/new.md"},
		},
		{
			name:    "a path outside the docs root",
			changed: []string{"../x.mdx"},
			want:    []wantProblem{{"../x.mdx", 0, "not a path under the docs root"}},
		},
		{
			name:    "no config",
			edits:   []func(fstest.MapFS){remove("docs.json")},
			changed: []string{"docs.json"},
			want:    []wantProblem{{"docs.json", 0, "there is no docs.json or mint.json"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := fixture(t, "kettle")
			for _, e := range tc.edits {
				e(m)
			}
			got := Validate(m, tc.changed)
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				w := tc.want[i]
				ok = got[i].File == w.File && (w.Line == 0 || got[i].Line == w.Line) && strings.Contains(got[i].Message, w.Text)
			}
			if !ok {
				t.Errorf("Validate =\n%swant %v", problemList(got), tc.want)
			}
		})
	}
}

func TestValidateMintJSON(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("testdata/legacy")
	got := Validate(fsys, allFiles(t, fsys))
	want := []wantProblem{
		{"help/broken-front-matter.mdx", 3, "put quotes around"},
		{"mint.json", 16, `navigation[0].pages[1].pages[1] names page "setup/gone"`},
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].File == want[i].File && got[i].Line == want[i].Line && strings.Contains(got[i].Message, want[i].Text)
	}
	if !ok {
		t.Errorf("Validate =\n%swant %v", problemList(got), want)
	}
}
