package answercheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
)

func TestPRComment(t *testing.T) {
	t.Parallel()
	restore := Check{Name: "restore-snapshot", Question: "How do I restore a snapshot?", Cite: []string{"guides/backups"}, Origin: OriginFile}
	rotate := Check{Name: "rotate-keys", Question: "How often are keys rotated?", Contains: []string{"90 days"}, Origin: OriginFile}
	before := []Result{
		Judge(restore, Answer{Status: assistant.StatusNotCovered}),
		Judge(rotate, Answer{Status: assistant.StatusAnswered, Text: "Every 90 days.", Cited: []string{"security/keys"}}),
	}
	after := []Result{
		Judge(restore, Answer{Status: assistant.StatusAnswered, Text: "Run restore.", Cited: []string{"/guides/backups#restore", "guides/backups"}}),
		Judge(rotate, Answer{Status: assistant.StatusPartial, Text: "Regularly.", Cited: []string{"security/keys"}}),
	}
	checks, totals := Compare(before, after)
	rep := Report{Domain: "docs.example.com", Ref: "refs/pull/3/head", Checks: checks, Totals: totals}
	got := PRComment("0123456789abcdef0123456789abcdef01234567", []CommentReport{{
		Report: rep, Domain: "docs.example.com", RunURL: "https://docsmith.example.com/ui/domains/docs.example.com/checks/runs/r1", SiteURL: "https://docs.example.com",
	}})
	for _, want := range []string{
		CommentMarker + "\n",
		"### Answer checks: 1 reader question now answered, 1 regressed\n",
		"Asked on `0123456789ab`",
		"**Newly answered**\n\n- **restore-snapshot**: How do I restore a snapshot?\n" +
			"  - before: not covered, citing nothing\n" +
			"  - after: answered, citing [guides/backups](https://docs.example.com/guides/backups)\n",
		"**Regressed**\n\n- **rotate-keys**: How often are keys rotated?\n" +
			"  - before: answered, citing [security/keys](https://docs.example.com/security/keys)\n" +
			"  - after: answered in part, citing [security/keys](https://docs.example.com/security/keys)\n" +
			"  - why it fails: expected the answer to contain \"90 days\"\n",
		"[Every check of this run](https://docsmith.example.com/ui/domains/docs.example.com/checks/runs/r1)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the comment lacks %q:\n%s", want, got)
		}
	}
	// Regressions come first: they are what a reviewer must see.
	if strings.Index(got, "**Regressed**") > strings.Index(got, "**Newly answered**") {
		t.Errorf("regressions are listed after the newly answered:\n%s", got)
	}
}

// Questions and answers are written by whoever opened the pull request:
// they may not add a second marker, HTML, links or mentions.
func TestPRCommentQuotesInert(t *testing.T) {
	t.Parallel()
	evil := Check{Name: "x", Question: CommentMarker + " <img src=x> [click](https://evil.example) @maintainers #1\n# Heading", Origin: OriginFile}
	before := []Result{Judge(evil, Answer{Status: assistant.StatusNotCovered})}
	after := []Result{Judge(evil, Answer{Status: assistant.StatusAnswered, Cited: []string{"a) [b](c"}})}
	checks, totals := Compare(before, after)
	got := PRComment("", []CommentReport{{Report: Report{Ref: "feature", Checks: checks, Totals: totals}, SiteURL: "https://docs.example.com"}})
	if n := strings.Count(got, CommentMarker); n != 1 {
		t.Fatalf("the marker appears %d times:\n%s", n, got)
	}
	for _, bad := range []string{"<img", "[click](", "@maintainers", "\n# Heading", "(https://docs.example.com/a) [b](c)"} {
		if strings.Contains(got, bad) {
			t.Errorf("the comment holds %q as Markdown:\n%s", bad, got)
		}
	}
}

func TestPRCommentBounded(t *testing.T) {
	t.Parallel()
	var before, after []Result
	long := strings.Repeat("How do I configure the very long option? ", 40)
	for i := range 2000 {
		c := Check{Name: fmt.Sprintf("check-%d", i), Question: long, Cite: []string{"guides/options"}, Origin: OriginFile}
		before = append(before, Judge(c, Answer{Status: assistant.StatusNotCovered}))
		after = append(after, Judge(c, Answer{Status: assistant.StatusAnswered, Cited: []string{"guides/options"}}))
	}
	checks, totals := Compare(before, after)
	reps := []CommentReport{{Report: Report{Ref: "feature", Checks: checks, Totals: totals, Problems: make([]string, 50)}, Domain: "a", RunURL: "https://x.example/run"}}
	got := PRComment("", reps)
	if len(got) > MaxCommentBytes {
		t.Fatalf("the comment is %d bytes, over %d", len(got), MaxCommentBytes)
	}
	if !strings.Contains(got, "not shown here for room") || !strings.Contains(got, "2000 reader questions now answered") || !strings.Contains(got, "[Every check of this run]") {
		t.Fatalf("a cut comment must say so, keep its headline and link the run:\n%s", got[len(got)-600:])
	}
}
