package builtin

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Command
	}{
		{`replace "quill serve" with "quill preview" in reference/serve.mdx`,
			[]Command{{Kind: Replace, Old: "quill serve", New: "quill preview", Path: "reference/serve.mdx"}}},
		{`Replace "a \"b\"" with "c\nd" everywhere`,
			[]Command{{Kind: Replace, Old: `a "b"`, New: "c\nd"}}},
		{`set description to "Preview the site" in reference/serve`,
			[]Command{{Kind: SetField, Field: "description", Value: "Preview the site", Path: "reference/serve"}}},
		{`add page guides/deploy titled "Deploy" to group "Getting started"`,
			[]Command{{Kind: AddPage, Path: "guides/deploy", Title: "Deploy", Group: "Getting started"}}},
		{"move guides/themes to guides/look-and-feel; delete page guides/pages",
			[]Command{{Kind: Move, Path: "guides/themes", To: "guides/look-and-feel"}, {Kind: Delete, Path: "guides/pages"}}},
		{"fix link \"/reference/serve\" to \"/reference/preview\" everywhere\n\n  fix link \"/a\" to \"/b\" in index",
			[]Command{{Kind: FixLink, Old: "/reference/serve", New: "/reference/preview"}, {Kind: FixLink, Old: "/a", New: "/b", Path: "index"}}},
		{`replace "x; y" with "z" in a.mdx`, // a ';' inside quotes does not split
			[]Command{{Kind: Replace, Old: "x; y", New: "z", Path: "a.mdx"}}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestParseWorkflowForms: the forms a scheduled workflow uses, as a
// workflow file's body holds them.
func TestParseWorkflowForms(t *testing.T) {
	t.Parallel()
	fix := Command{Kind: FixBrokenLinks}
	check := Command{Kind: CheckNavigation}
	tests := []struct {
		name string
		in   string
		want []Command
	}{
		{"fix", "fix broken links everywhere", []Command{fix}},
		{"fix in capitals", "Fix Broken Links EVERYWHERE", []Command{fix}},
		{"check", "check the navigation", []Command{check}},
		{"check with blanks and CRLF", "  Check  the\tNavigation \r\n", []Command{check}},
		{"blank lines around", "\n\n  \nfix broken links everywhere\n\n", []Command{fix}},
		{"both, separated by ;", "check the navigation; fix broken links everywhere", []Command{check, fix}},
		{"a workflow body with a comment", "<!-- Runs every Monday; owner: docs -->\n\nfix broken links everywhere\n", []Command{fix}},
		{"with other commands", "fix broken links everywhere\ndelete page guides/old\ncheck the navigation",
			[]Command{fix, {Kind: Delete, Path: "guides/old"}, check}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseWorkflowFormsRefused(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"Fix the broken links on every page, please.",
		"fix broken links",
		"fix broken links everywhere now",
		"fix broken links in guides/setup",
		"fix broken link everywhere",
		`fix broken links "everywhere"`,
		"check navigation",
		"check the navigation.",
		"check the navigation in docs.json",
		"# Links\nfix broken links everywhere",
		"fix broken links everywhere <!-- weekly -->",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "does not understand") || !strings.Contains(msg, "fix broken links everywhere ") || !strings.Contains(msg, "check the navigation ") {
			t.Errorf("Parse(%q) error does not name the line and list the forms: %v", in, err)
		}
	}
}

// TestParseSkipsComments: a workflow file's body may hold Markdown
// comments beside its commands.
func TestParseSkipsComments(t *testing.T) {
	t.Parallel()
	del := []Command{{Kind: Delete, Path: "a"}}
	tests := []struct {
		name string
		in   string
		want []Command
	}{
		{"blank lines around", "\n\n  \ndelete a\n\n", del},
		{"comment line", "<!-- Runs every Monday. -->\ndelete a", del},
		{"comment after the command", "delete a\n  <!-- see docs; \"links\" -->  \n", del},
		{"comment over lines", "<!--\nOwner: docs team\ndelete b\n-->\ndelete a", del},
		{"comment after ;", "delete a; <!-- weekly -->", del},
		{"comment text in quotes is text", "replace \"a\n<!-- x -->\" with \"b\" everywhere",
			[]Command{{Kind: Replace, Old: "a\n<!-- x -->", New: "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRefusesTextBesideComments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"heading", "# Pages\ndelete a", "does not understand \"# Pages\""},
		{"comment and text on one line", "<!-- weekly --> delete a", "does not understand"},
		{"text and comment on one line", "delete a <!-- weekly -->", "does not understand"},
		{"unclosed comment", "delete a\n<!-- weekly", "comment is not closed"},
		{"only a comment", "<!-- delete a -->", "has no command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `replace "OLD" with "NEW" in PATH`) {
				t.Fatalf("Parse(%q) error = %v, want it to say %q and list the forms", tc.in, err, tc.want)
			}
		})
	}
}

func TestParseRefusesWithTheForms(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"Document the new --watch flag",
		`replace "a" with "b"`,
		`replace "" with "b" everywhere`,
		`set ti:tle to "x" in a`,
		`replace "a with "b" in x`,
		"",
		"  ;  ",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		if !strings.Contains(err.Error(), `replace "OLD" with "NEW" in PATH`) {
			t.Errorf("Parse(%q) error does not list the forms: %v", in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`replace "a" with "b" in c`)
	f.Add("move a to b; delete c")
	f.Add(`"unterminated`)
	f.Add("<!-- weekly -->\ndelete a; <!--\n-->delete b")
	f.Add("Fix broken links everywhere\ncheck the navigation")
	f.Fuzz(func(t *testing.T, s string) {
		cmds, err := Parse(s)
		if err == nil && len(cmds) == 0 {
			t.Fatalf("Parse(%q) returned no commands and no error", s)
		}
	})
}
