package answercheck_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/answercheck"
)

func TestParseFileReadsChecks(t *testing.T) {
	t.Parallel()
	data := []byte(`# The questions our readers ask most.
checks:
  - name: restore-snapshot
    question: How do I restore a snapshot of the data directory?
    cite: [guides/backups, /guides/restore.mdx]
    contains: ["restore"]
  - question: "How do I deploy on Kubernetes with a Helm chart?"
    not_covered: true
  - question: Which port does the server listen on?
    cite: reference/config
`)
	got, problems := answercheck.ParseFile(".docsmith/checks.yaml", data)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := []answercheck.Check{
		{Name: "restore-snapshot", Question: "How do I restore a snapshot of the data directory?", Cite: []string{"guides/backups", "/guides/restore.mdx"}, Contains: []string{"restore"}, Origin: answercheck.OriginFile},
		{Name: "how-do-i-deploy-on-kubernetes-with-a-helm-chart", Question: "How do I deploy on Kubernetes with a Helm chart?", NotCovered: true, Origin: answercheck.OriginFile},
		{Name: "which-port-does-the-server-listen-on", Question: "Which port does the server listen on?", Cite: []string{"reference/config"}, Origin: answercheck.OriginFile},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checks =\n%#v\nwant\n%#v", got, want)
	}
}

// TestParseFileProblems: each mistake is a problem naming the file, the
// line and the key; the check with it is left out and the others run.
func TestParseFileProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		want  []string // problems, as Error() says them
		names []string // the checks kept
	}{
		{
			name:  "unknown key",
			yaml:  "checks:\n  - question: How?\n    cites: [a]\n  - question: Why?\n",
			want:  []string{"f.yaml:3: checks[0].cites: is not a known key; a check has name, question, cite, contains and not_covered"},
			names: []string{"why"},
		},
		{
			name:  "unknown top-level key",
			yaml:  "version: 2\nchecks:\n  - question: How?\n",
			want:  []string{`f.yaml:1: version: is not a known key; the file holds "checks" only`},
			names: []string{"how"},
		},
		{
			name: "no question, empty cite, not_covered with cite",
			yaml: "checks:\n  - name: a\n  - question: X?\n    cite: []\n  - question: Y?\n    not_covered: true\n    cite: [p]\n  - question: Z?\n    not_covered: yes please\n",
			want: []string{
				"f.yaml:2: checks[0]: has no question",
				"f.yaml:4: checks[1].cite: is an empty list; leave the key out instead",
				"f.yaml:5: checks[2]: not_covered cannot go with cite or contains: an answer that says the docs do not cover a question cites nothing",
				"f.yaml:9: checks[3].not_covered: must be true or false",
			},
		},
		{
			name: "duplicate names, given or from the question",
			yaml: "checks:\n  - question: How now?\n  - name: how-now\n    question: Other\n  - name: how-now\n    question: Third\n  - question: How now?\n",
			want: []string{`f.yaml:5: checks[2].name: "how-now" is the name of the check on line 3 too; names must differ`},
			// The name given wins; the questions take the next free slugs.
			names: []string{"how-now-2", "how-now", "how-now-3"},
		},
		{
			name:  "bad values",
			yaml:  "checks:\n  - question: [a, b]\n  - question: Q\n    cite: [\"https://docs.example.com/a\", \"../etc\"]\n  - name: \"has space\"\n    question: R\n  - question: S\n    contains: {a: b}\n",
			want:  []string{"f.yaml:2: checks[0].question: must be text", "f.yaml:4: checks[1].cite[0]: must be a page's path, such as guides/backups, not a URL", `f.yaml:4: checks[1].cite[1]: must not hold ".."`, "f.yaml:5: checks[2].name: may hold letters, digits and - _ . / only, not ' '", "f.yaml:8: checks[3].contains: must be text"},
			names: nil,
		},
		{
			name: "key given twice",
			yaml: "checks:\n  - question: A\n    question: B\n",
			want: []string{"f.yaml:3: checks[0].question: is given twice"},
		},
		{name: "not YAML", yaml: "checks: [", want: []string{"f.yaml: is not valid YAML: line 1: did not find expected node content"}},
		{name: "empty", yaml: "", want: []string{`f.yaml: is empty; it needs a "checks" list`}},
		{name: "a list", yaml: "- question: A\n", want: []string{`f.yaml:1: must be a mapping with a "checks" list`}},
		{name: "checks not a list", yaml: "checks: yes\n", want: []string{"f.yaml:1: checks: must be a list of checks"}},
		{name: "no checks", yaml: "other: 1\n", want: []string{`f.yaml:1: other: is not a known key; the file holds "checks" only`, `f.yaml:1: has no "checks" list`}},
		{name: "two documents", yaml: "checks: []\n---\nchecks: []\n", want: []string{"f.yaml: holds more than one YAML document; keep one"}},
		{
			name: "question too long",
			yaml: "checks:\n  - question: " + strings.Repeat("x", answercheck.MaxQuestionRunes+1) + "\n",
			want: []string{fmt.Sprintf("f.yaml:2: checks[0].question: is %d characters long; the limit is %d", answercheck.MaxQuestionRunes+1, answercheck.MaxQuestionRunes)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checks, problems := answercheck.ParseFile("f.yaml", []byte(tt.yaml))
			var got []string
			for _, p := range problems {
				got = append(got, p.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems =\n%q\nwant\n%q", got, tt.want)
			}
			var names []string
			for _, c := range checks {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Errorf("checks kept = %q, want %q", names, tt.names)
			}
		})
	}
}

func TestParseFileBounds(t *testing.T) {
	t.Parallel()
	big := make([]byte, answercheck.MaxFileBytes+1)
	if checks, problems := answercheck.ParseFile("f.yaml", big); checks != nil || len(problems) != 1 || !strings.Contains(problems[0].Msg, "the limit is") {
		t.Fatalf("a file over the limit = %v, %v", checks, problems)
	}
	var b strings.Builder
	b.WriteString("checks:\n")
	for i := range answercheck.MaxChecks + 3 {
		fmt.Fprintf(&b, "  - question: Question %d?\n", i)
	}
	checks, problems := answercheck.ParseFile("f.yaml", []byte(b.String()))
	if len(checks) != answercheck.MaxChecks {
		t.Fatalf("%d checks kept, want %d", len(checks), answercheck.MaxChecks)
	}
	if len(problems) != 1 || problems[0].Line != answercheck.MaxChecks+2 || !strings.Contains(problems[0].Msg, "the 2 after it are left out") {
		t.Fatalf("problems = %v", problems)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"How do I restore a snapshot?":   "how-do-i-restore-a-snapshot",
		"  --- ":                         "check",
		"Wie läuft's mit Ümlauten?":      "wie-läuft-s-mit-ümlauten",
		strings.Repeat("word ", 40):      strings.TrimSuffix(strings.Repeat("word-", 12), "-"),
		"What's new in v2.1 (beta)?":     "what-s-new-in-v2-1-beta",
		"日本語の質問":                         "日本語の質問",
		"Deploy: docker/compose, or k8s": "deploy-docker-compose-or-k8s",
	} {
		if got := answercheck.Slug(q); got != want {
			t.Errorf("Slug(%q) = %q, want %q", q, got, want)
		}
	}
}

// FuzzParseFile: any bytes give checks that are valid and uniquely named,
// or problems, never a panic.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte("checks:\n  - question: How?\n    cite: [a]\n    contains: [b]\n  - question: How?\n    not_covered: true\n"))
	f.Add([]byte("checks: [{name: a, question: b}, {name: a, question: c}]"))
	f.Add([]byte("checks:\n  - &x {question: a}\n  - *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checks, _ := answercheck.ParseFile("f.yaml", data)
		seen := map[string]bool{}
		for _, c := range checks {
			if c.Name == "" || seen[c.Name] || strings.TrimSpace(c.Question) == "" || c.Origin != answercheck.OriginFile {
				t.Fatalf("invalid check %#v", c)
			}
			if c.NotCovered && (len(c.Cite) > 0 || len(c.Contains) > 0) {
				t.Fatalf("not_covered with cite or contains: %#v", c)
			}
			seen[c.Name] = true
		}
	})
}
