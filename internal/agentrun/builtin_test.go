package agentrun

import (
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/workflow"
)

// TestBuiltinReadsOnlyTheInstructionOfAPushRun: the push data after a
// workflow's instruction (commit messages, file names, diff) is not read as
// commands, even when a commit message holds one.
func TestBuiltinReadsOnlyTheInstructionOfAPushRun(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	wf := workflow.Workflow{Instruction: `replace "Keep reading as the file grows" with "Keep reading as lines are appended" in guides/flags`}
	push := &workflow.Push{
		Repo: "acme/lantern", Branch: "main", Before: "4b825dc642cb", After: "9c1f0e6b2a7d", TotalCommits: 1,
		Commits: []workflow.Commit{{ID: "1a2b3c4d5e6f", Message: "Tidy\n\ndelete page guides/usage", Modified: []string{"main.go"}}},
	}
	out, err := b.run(t, 1, workflow.Instruction(wf, push, "diff --git a/main.go b/main.go\n+// delete index\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.FilesChanged) != 1 || out.FilesChanged[0] != "guides/flags.mdx" {
		t.Fatalf("outcome = %+v, want only guides/flags.mdx changed", out)
	}
	if !strings.Contains(b.branchFile(t, "docs.json"), "guides/usage") {
		t.Fatal("a command from the push data was carried out")
	}
}

// TestBuiltinFixBrokenLinks: a workflow body that asks to fix broken links
// fixes those that mean exactly one page or heading, in one commit, and
// lists the others; run again, it finds nothing more it can fix.
func TestBuiltinFixBrokenLinks(t *testing.T) {
	t.Parallel()
	b := setupSite(t, "builtin", "testdata/links")
	out, err := b.run(t, 1, "<!-- Weekly link check. -->\n\nfix broken links everywhere\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.FilesChanged, ","); got != "guides/config.mdx,index.mdx" {
		t.Fatalf("files changed = %q, want guides/config.mdx and index.mdx", got)
	}
	for _, want := range []string{
		`Fixed 3 broken links in 2 pages: guides/config.mdx:13 "/setup/install" → "/start/install"; ` +
			`index.mdx:6 "/getting-started/install" → "/start/install"; index.mdx:8 "/guides/config#Config_File" → "/guides/config#config-file".`,
		`Left 2 broken links that cannot be fixed unambiguously: ` +
			`index.mdx:8: link "/filters" could mean /guides/plugins/filters or /reference/filters; ` +
			`index.mdx:10: link "/roadmap": there is no page roadmap.mdx`,
		`The navigation names 1 missing page, which this command does not change; "check the navigation" lists it.`,
	} {
		if !strings.Contains(out.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, out.Summary)
		}
	}
	index := b.branchFile(t, "index.mdx")
	for _, want := range []string{"[install Pebble](/start/install)", "[the config file](/guides/config#config-file)", "[filters](/filters)", "[the roadmap](/roadmap)"} {
		if !strings.Contains(index, want) {
			t.Errorf("index.mdx on the branch lacks %q:\n%s", want, index)
		}
	}
	if config := b.branchFile(t, "guides/config.mdx"); !strings.Contains(config, "  title=\"Install\"\n  href=\"/start/install\"\n>") {
		t.Errorf("the Card's href is not fixed in place:\n%s", config)
	}
	if log := git(t, b.remote, "log", "-1", "--format=%B", b.turn.Job.Branch); !strings.Contains(log, "Fixed 3 broken links") {
		t.Errorf("commit message:\n%s", log)
	}
	for _, e := range []string{"tool", "validation", "commit"} {
		if !b.prog.has(e) {
			t.Errorf("no %s event in %v", e, b.prog.events)
		}
	}

	// The links left cannot be fixed: a second turn changes nothing.
	out, err = b.run(t, 2, "fix broken links everywhere")
	if err != nil {
		t.Fatal(err)
	}
	want := `Nothing changed: 2 broken links found in the 6 pages checked, and none can be fixed unambiguously: index.mdx:8: link "/filters" could mean`
	if len(out.FilesChanged) != 0 || !strings.HasPrefix(out.Summary, want) {
		t.Fatalf("second turn: outcome = %+v, want no files and a summary starting %q", out, want)
	}
	if n := strings.Count(git(t, b.remote, "log", "--format=%s", b.turn.Job.Branch), "\n"); n != 2 {
		t.Fatalf("branch has %d commits, want 2 (seed + the first turn)", n)
	}
}

// TestBuiltinFixBrokenLinksOnACleanSite: with nothing broken, the turn
// completes without a change, a branch or a pull request.
func TestBuiltinFixBrokenLinksOnACleanSite(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	out, err := b.run(t, 1, "Fix broken links everywhere")
	if err != nil {
		t.Fatal(err)
	}
	want := "Nothing changed: no internal link of the 4 pages checked is broken."
	if len(out.FilesChanged) != 0 || out.PRLink != "" || out.Summary != want {
		t.Fatalf("outcome = %+v, want no files, no PR and the summary %q", out, want)
	}
	if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
		t.Fatal("a branch was pushed although nothing changed")
	}
}

// TestBuiltinCheckTheNavigation: the check reports and never changes a
// file, on a site with problems and on one without.
func TestBuiltinCheckTheNavigation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, site string
		want       []string
	}{
		{"problems", "testdata/links", []string{
			"Checked the navigation in docs.json and changed nothing. Found 3 problems: " +
				"1 entry names a missing page, 1 page is not listed, 1 page is listed more than once.",
			`Entries naming missing pages (1): docs.json:11: navigation.groups[1].pages[3] names page "guides/retired", but there is no guides/retired.mdx or guides/retired.md; create the page or fix the entry.`,
			"Pages not listed in the navigation (1): guides/drafts.mdx.",
			"Pages listed more than once (1): index 2 times, under Start and under Start.",
		}},
		{"fine", "testdata/site", []string{
			"The navigation is fine: docs.json lists 4 pages, each once and each with a file, and every page of the docs that is not marked hidden is listed. Nothing was changed.",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupSite(t, "builtin", tc.site)
			out, err := b.run(t, 1, "check the navigation")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.Summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, out.Summary)
				}
			}
			if len(out.FilesChanged) != 0 || out.PRLink != "" || b.prog.has("tool") || b.prog.has("commit") {
				t.Errorf("outcome = %+v, events %v; want no tool call, no file and no commit", out, b.prog.events)
			}
			if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
				t.Error("a branch was pushed by a report-only command")
			}
		})
	}
}

func TestRewriteLinks(t *testing.T) {
	t.Parallel()
	link := func(line int, target, fix string) docs.BrokenLink {
		return docs.BrokenLink{File: "a.mdx", Line: line, Target: target, Fix: fix}
	}
	tests := []struct {
		name       string
		text       string
		links      []docs.BrokenLink
		want       string
		done, miss int
	}{
		{"two on one line", "See [a](/x) and [b](/x).\n",
			[]docs.BrokenLink{link(1, "/x", "/y"), link(1, "/x", "/y")}, "See [a](/y) and [b](/y).\n", 2, 0},
		{"title, angle brackets, reference", "[a](/x \"T\") [b](</x>)\n\n[c]: /x\n",
			[]docs.BrokenLink{link(1, "/x", "/y"), link(1, "/x", "/y"), link(3, "/x", "/y")}, "[a](/y \"T\") [b](</y>)\n\n[c]: /y\n", 3, 0},
		{"href on a later line of its tag", "<Card\n  title='X'\n  href='/x'\n/>\n",
			[]docs.BrokenLink{link(1, "/x", "/y")}, "<Card\n  title='X'\n  href='/y'\n/>\n", 1, 0},
		{"only from the link's line on", "Write `[a](/x)` for a link.\n\nLike [this](/x).\n",
			[]docs.BrokenLink{link(3, "/x", "/y")}, "Write `[a](/x)` for a link.\n\nLike [this](/y).\n", 1, 0},
		{"not past the link's block", "A link to /x.\n\n```\n[a](/x)\n```\n",
			[]docs.BrokenLink{link(1, "/x", "/y")}, "A link to /x.\n\n```\n[a](/x)\n```\n", 0, 1},
		{"written with an entity", "[a](/a&amp;b)\n",
			[]docs.BrokenLink{link(1, "/a&b", "/c")}, "[a](/a&amp;b)\n", 0, 1},
		{"CRLF", "[a](/x)\r\n\r\n[b]: /x\r\n",
			[]docs.BrokenLink{link(1, "/x", "/y"), link(3, "/x", "/y")}, "[a](/y)\r\n\r\n[b]: /y\r\n", 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, done, missed := rewriteLinks(tc.text, tc.links)
			if got != tc.want || len(done) != tc.done || len(missed) != tc.miss {
				t.Fatalf("rewriteLinks = %q, %d done, %d missed; want %q, %d, %d", got, len(done), len(missed), tc.want, tc.done, tc.miss)
			}
		})
	}
}
