package workflow

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

const updateDocs = `---
name: Update docs from code
on:
  push:
    - repo: acme/api
      branch: main
    - repo: acme/sdk
context:
  - repo: acme/api
automerge: false
---
Read the code change and update the reference pages it affects.
`

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		data string
		want Workflow
	}{
		{
			name: "push list with context",
			file: ".mintlify/workflows/update-docs.md",
			data: updateDocs,
			want: Workflow{
				ID: "update-docs", Path: ".mintlify/workflows/update-docs.md", Name: "Update docs from code",
				Push:        []PushTrigger{{Repo: "acme/api", Branch: "main"}, {Repo: "acme/sdk"}},
				Context:     []string{"acme/api"},
				Instruction: "Read the code change and update the reference pages it affects.",
			},
		},
		{
			name: "cron with automerge and CRLF",
			file: ".docsmith/workflows/weekly_links.md",
			data: "---\r\nname: Weekly links\r\non:\r\n  cron: \"0  9 * * 1\"\r\nautomerge: true\r\n---\r\nfix broken links everywhere\r\n",
			want: Workflow{
				ID: "weekly_links", Path: ".docsmith/workflows/weekly_links.md", Name: "Weekly links",
				Cron: "0 9 * * 1", Automerge: true, Instruction: "fix broken links everywhere",
			},
		},
		{
			name: "single push mapping",
			file: "w/one.md",
			data: "---\nname: One\non:\n  push:\n    repo: acme/group/api\n    branch: release/v2\n---\nDo it.\n",
			want: Workflow{
				ID: "one", Path: "w/one.md", Name: "One",
				Push: []PushTrigger{{Repo: "acme/group/api", Branch: "release/v2"}}, Instruction: "Do it.",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ps := Parse(tt.file, []byte(tt.data))
			if len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		data string
		// want lists "line key substring" triples, one per expected problem.
		want []Problem
	}{
		{"no front matter", "x.md", "just text\n", []Problem{{Line: 1, Msg: "front matter"}}},
		{"unclosed front matter", "x.md", "---\nname: a\n", []Problem{{Line: 1, Msg: "front matter"}}},
		{"missing name and on", "x.md", "---\nautomerge: true\n---\nbody\n", []Problem{{Line: 2, Key: "name", Msg: "required"}, {Line: 2, Key: "on", Msg: "required"}}},
		{"unknown key", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\nreviewers: [me]\n---\nbody\n", []Problem{{Line: 5, Key: "reviewers", Msg: "not a known key"}}},
		{"both triggers", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\n  push:\n    repo: a/b\n---\nbody\n", []Problem{{Line: 5, Key: "on", Msg: "exactly one trigger"}}},
		{"bad cron", "x.md", "---\nname: a\non:\n  cron: '0 9 * *'\n---\nbody\n", []Problem{{Line: 4, Key: "on.cron", Msg: "5 fields"}}},
		{"cron out of range", "x.md", "---\nname: a\non:\n  cron: '61 9 * * *'\n---\nbody\n", []Problem{{Line: 4, Key: "on.cron", Msg: "outside 0-59"}}},
		{"unknown trigger", "x.md", "---\nname: a\non:\n  schedule: daily\n---\nbody\n", []Problem{{Line: 4, Key: "on.schedule", Msg: "not a known trigger"}}},
		{"bad repo", "x.md", "---\nname: a\non:\n  push:\n    - repo: justname\n---\nbody\n", []Problem{{Line: 5, Key: "on.push[0].repo", Msg: "owner/name"}}},
		{"dotdot repo", "x.md", "---\nname: a\non:\n  push:\n    - repo: a/..\n---\nbody\n", []Problem{{Line: 5, Key: "on.push[0].repo", Msg: "owner/name"}}},
		{"bad branch", "x.md", "---\nname: a\non:\n  push:\n    - repo: a/b\n      branch: --upload-pack=x\n---\nbody\n", []Problem{{Line: 5, Key: "on.push[0].branch", Msg: "not a valid branch"}}},
		{"unknown push key", "x.md", "---\nname: a\non:\n  push:\n    - repo: a/b\n      paths: [src]\n---\nbody\n", []Problem{{Line: 6, Key: "on.push[0].paths", Msg: "not a known key"}}},
		{"too many push repos", "x.md", "---\nname: a\non:\n  push: [" + strings.Repeat("{repo: a/b},", 10) + "{repo: a/c}]\n---\nbody\n", []Problem{{Line: 4, Key: "on.push", Msg: "at most 10"}}},
		{"duplicate push repo", "x.md", "---\nname: a\non:\n  push:\n    - repo: a/b\n    - repo: A/B\n---\nbody\n", []Problem{{Line: 6, Key: "on.push[1]", Msg: "repeats"}}},
		{"automerge not bool", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\nautomerge: \"yes\"\n---\nbody\n", []Problem{{Line: 5, Key: "automerge", Msg: "true or false"}}},
		{"context not list", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\ncontext: a/b\n---\nbody\n", []Problem{{Line: 5, Key: "context", Msg: "list"}}},
		{"context entry without repo", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\ncontext:\n  - branch: main\n---\nbody\n", []Problem{{Line: 6, Key: "context[0].branch", Msg: "not a known key"}, {Line: 6, Key: "context[0].repo", Msg: "required"}}},
		{"empty body", "x.md", "---\nname: a\non:\n  cron: '* * * * *'\n---\n  \n", []Problem{{Line: 6, Msg: "instruction"}}},
		{"name not string", "x.md", "---\nname: 12\non:\n  cron: '* * * * *'\n---\nbody\n", []Problem{{Line: 2, Key: "name", Msg: "string"}}},
		{"name with escape", "x.md", "---\nname: \"a\\e[2J\"\non:\n  cron: '* * * * *'\n---\nbody\n", []Problem{{Line: 2, Key: "name", Msg: "control characters"}}},
		{"duplicate key", "x.md", "---\nname: a\nname: b\non:\n  cron: '* * * * *'\n---\nbody\n", []Problem{{Line: 3, Key: "name", Msg: "twice"}}},
		{"alias", "x.md", "---\nname: &n a\non:\n  cron: *n\n---\nbody\n", []Problem{{Line: 2, Msg: "aliases"}}},
		{"invalid yaml", "x.md", "---\nname: [a\non: x\n---\nbody\n", []Problem{{Line: 2, Msg: "not valid YAML"}}},
		{"bad id", "dir/-x.md", "---\nname: a\non:\n  cron: '* * * * *'\n---\nbody\n", []Problem{{Msg: "workflow id"}}},
		{"not a mapping", "x.md", "---\n- a\n---\nbody\n", []Problem{{Line: 2, Msg: "mapping"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps := Parse(tt.file, []byte(tt.data))
			if len(ps) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d", len(ps), ps, len(tt.want))
			}
			for i, w := range tt.want {
				p := ps[i]
				if p.File != tt.file || p.Line != w.Line || p.Key != w.Key || !strings.Contains(p.Msg, w.Msg) {
					t.Errorf("problem %d = %q (line %d, key %q), want line %d key %q containing %q", i, p.Error(), p.Line, p.Key, w.Line, w.Key, w.Msg)
				}
			}
		})
	}
}

func TestProblemErrorNamesFileLineKey(t *testing.T) {
	t.Parallel()
	p := Problem{File: ".mintlify/workflows/a.md", Line: 4, Key: "on.cron", Msg: "bad"}
	if got, want := p.Error(), ".mintlify/workflows/a.md:4: on.cron: bad"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLoadBothDirectoriesDocsmithOverrides(t *testing.T) {
	t.Parallel()
	cronFile := "---\nname: From docsmith\non:\n  cron: '0 9 * * 1'\n---\nfix broken links everywhere\n"
	fsys := fstest.MapFS{
		".mintlify/workflows/update-docs.md": {Data: []byte(updateDocs)},
		".mintlify/workflows/links.md":       {Data: []byte(strings.Replace(cronFile, "From docsmith", "From mintlify", 1))},
		".mintlify/workflows/README.txt":     {Data: []byte("not a workflow")},
		".mintlify/workflows/broken.md":      {Data: []byte("no front matter")},
		".docsmith/workflows/links.md":       {Data: []byte(cronFile)},
	}
	wfs, ps := Load(fsys)
	if len(ps) != 1 || ps[0].File != ".mintlify/workflows/broken.md" {
		t.Fatalf("problems = %v, want one for broken.md", ps)
	}
	if len(wfs) != 2 || wfs[0].ID != "links" || wfs[1].ID != "update-docs" {
		t.Fatalf("workflows = %+v", wfs)
	}
	if wfs[0].Name != "From docsmith" || wfs[0].Overrides != ".mintlify/workflows/links.md" || wfs[0].Path != ".docsmith/workflows/links.md" {
		t.Fatalf("override not applied: %+v", wfs[0])
	}
}

func TestLoadBrokenOverrideDisablesBoth(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".mintlify/workflows/links.md": {Data: []byte("---\nname: a\non:\n  cron: '0 9 * * 1'\nautomerge: true\n---\nbody\n")},
		".docsmith/workflows/links.md": {Data: []byte("---\nname: a\non:\n  cron: '0 9 * * 1'\nautomerge: maybe\n---\nbody\n")},
	}
	wfs, ps := Load(fsys)
	if len(wfs) != 0 {
		t.Fatalf("workflows = %+v, want none", wfs)
	}
	if len(ps) != 2 || ps[0].File != ".docsmith/workflows/links.md" || ps[1].File != ".mintlify/workflows/links.md" || !strings.Contains(ps[1].Msg, "not used either") {
		t.Fatalf("problems = %v", ps)
	}
}

func TestLoadNoDirectories(t *testing.T) {
	t.Parallel()
	wfs, ps := Load(fstest.MapFS{"docs.json": {Data: []byte("{}")}})
	if len(wfs) != 0 || len(ps) != 0 {
		t.Fatalf("got %v %v, want nothing", wfs, ps)
	}
}

func TestLoadRefusesHostileRepository(t *testing.T) {
	t.Parallel()
	valid := []byte("---\nname: a\non:\n  cron: '* * * * *'\n---\nbody\n")
	t.Run("symlinked file", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		dir := filepath.Join(root, ".mintlify", "workflows")
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(root, "secret.md"), valid, 0o644))
		must(t, os.Symlink(filepath.Join(root, "secret.md"), filepath.Join(dir, "link.md")))
		must(t, os.WriteFile(filepath.Join(dir, "ok.md"), valid, 0o644))
		wfs, ps := Load(os.DirFS(root))
		if len(wfs) != 1 || wfs[0].ID != "ok" {
			t.Fatalf("workflows = %+v", wfs)
		}
		if len(ps) != 1 || ps[0].File != ".mintlify/workflows/link.md" || !strings.Contains(ps[0].Msg, "symbolic link") {
			t.Fatalf("problems = %v", ps)
		}
	})
	t.Run("symlinked file in a file system without Lstat", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		dir := filepath.Join(root, ".mintlify", "workflows")
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(root, "secret.md"), valid, 0o644))
		must(t, os.Symlink(filepath.Join(root, "secret.md"), filepath.Join(dir, "link.md")))
		must(t, os.Symlink(dir, filepath.Join(root, ".docsmith")))
		wfs, ps := Load(plainFS{os.DirFS(root)})
		if len(wfs) != 0 || len(ps) != 2 || ps[0].File != ".mintlify/workflows/link.md" || ps[1].File != ".docsmith" {
			t.Fatalf("got %v %v", wfs, ps)
		}
		for _, p := range ps {
			if !strings.Contains(p.Msg, "symbolic link") {
				t.Fatalf("problem %v does not say symbolic link", p)
			}
		}
	})
	t.Run("symlinked directory", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		elsewhere := t.TempDir()
		must(t, os.WriteFile(filepath.Join(elsewhere, "x.md"), valid, 0o644))
		must(t, os.MkdirAll(filepath.Join(root, ".docsmith"), 0o755))
		must(t, os.Symlink(elsewhere, filepath.Join(root, ".docsmith", "workflows")))
		wfs, ps := Load(os.DirFS(root))
		if len(wfs) != 0 || len(ps) != 1 || ps[0].File != ".docsmith/workflows" || !strings.Contains(ps[0].Msg, "symbolic link") {
			t.Fatalf("got %v %v", wfs, ps)
		}
	})
	t.Run("symlinked parent directory", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		elsewhere := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(elsewhere, "workflows"), 0o755))
		must(t, os.WriteFile(filepath.Join(elsewhere, "workflows", "x.md"), valid, 0o644))
		must(t, os.Symlink(elsewhere, filepath.Join(root, ".mintlify")))
		wfs, ps := Load(os.DirFS(root))
		if len(wfs) != 0 || len(ps) != 1 || ps[0].File != ".mintlify" {
			t.Fatalf("got %v %v", wfs, ps)
		}
	})
	t.Run("huge file", func(t *testing.T) {
		t.Parallel()
		big := append(append([]byte{}, valid...), strings.Repeat("x", MaxFileBytes)...)
		wfs, ps := Load(fstest.MapFS{".mintlify/workflows/big.md": {Data: big}})
		if len(wfs) != 0 || len(ps) != 1 || !strings.Contains(ps[0].Msg, "larger than") {
			t.Fatalf("got %v %v", wfs, ps)
		}
	})
	t.Run("too many files", func(t *testing.T) {
		t.Parallel()
		fsys := fstest.MapFS{}
		for i := range MaxFiles + 1 {
			fsys[".mintlify/workflows/w"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))+".md"] = &fstest.MapFile{Data: valid}
		}
		wfs, ps := Load(fsys)
		if len(wfs) != 0 || len(ps) != 1 || !strings.Contains(ps[0].Msg, "at most 100") {
			t.Fatalf("got %d workflows, problems %v", len(wfs), ps)
		}
	})
	t.Run("too many entries", func(t *testing.T) {
		t.Parallel()
		fsys := fstest.MapFS{}
		for i := range maxDirEntries + 1 {
			fsys[".mintlify/workflows/f"+strings.Repeat("y", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))+".txt"] = &fstest.MapFile{}
		}
		_, ps := Load(fsys)
		if len(ps) != 1 || !strings.Contains(ps[0].Msg, "more than") {
			t.Fatalf("problems %v", ps)
		}
	})
}

// plainFS hides every optional interface but Open, as a minimal fs.FS.
type plainFS struct{ fsys fs.FS }

func (p plainFS) Open(name string) (fs.File, error) { return p.fsys.Open(name) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(updateDocs))
	f.Add([]byte("---\nname: a\non:\n  cron: '*/5 1-3 1,15 JAN-MAR MON-FRI'\n---\nbody\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nname: &a [*a, *a]\n---\nx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, ps := Parse(".mintlify/workflows/fuzz.md", data)
		if len(ps) > 0 {
			for _, p := range ps {
				if p.File == "" || p.Msg == "" {
					t.Fatalf("problem without file or message: %+v", p)
				}
			}
			return
		}
		if wf.Name == "" || wf.Instruction == "" || (wf.Cron == "") == (len(wf.Push) == 0) {
			t.Fatalf("accepted an invalid workflow: %+v", wf)
		}
		if wf.Cron != "" {
			if _, err := ParseSchedule(wf.Cron, nil); err != nil {
				t.Fatalf("accepted cron %q that does not parse: %v", wf.Cron, err)
			}
		}
	})
}
