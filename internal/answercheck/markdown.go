package answercheck

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/search"
)

// CommentMarker is the hidden line that marks docsmith's answer-check
// comment on a pull request, so that later pushes edit that comment rather
// than add another.
const CommentMarker = "<!-- docsmith:answer-checks -->"

// MaxCommentBytes bounds a rendered comment: below GitHub's 65,536
// characters, the smallest limit of the forges docsmith speaks to, with
// room to spare.
const MaxCommentBytes = 60_000

// Bounds of what a comment quotes of each check.
const (
	maxQuotedRunes   = 300
	maxCitedInLine   = 5
	maxProblemsShown = 10
)

// CommentReport is one domain's report as a pull request comment shows it.
type CommentReport struct {
	Report Report
	// Domain names the domain's section when the comment holds several.
	Domain string
	// RunURL is the run's page in the dashboard, or "".
	RunURL string
	// SiteURL is the domain's docs site, for links to cited pages, or "".
	SiteURL string
}

// Headline is the comment's one line over all its reports, as
// Report.Summary says it: "4 reader questions now answered, 0 regressed".
func Headline(reports []CommentReport) string {
	var all Report
	for _, r := range reports {
		if all.Ref == "" {
			all.Ref = r.Report.Ref
		}
		t := r.Report.Totals
		all.Totals.Checks += t.Checks
		all.Totals.Passed += t.Passed
		all.Totals.Failed += t.Failed
		all.Totals.NewlyAnswered += t.NewlyAnswered
		all.Totals.Regressed += t.Regressed
		all.Totals.Unchanged += t.Unchanged
		all.Totals.Added += t.Added
	}
	if all.Ref == "" {
		all.Ref = "head"
	}
	return all.Summary()
}

// PRComment renders the Markdown comment of a pull request's answer
// checks: the marker, the headline, then for each report the questions
// newly answered and regressed, each before and after (status and cited
// pages), and links to the run and the cited pages. Text that came from
// the checks or the answers is quoted inert: no HTML, no mentions, no
// Markdown of its own. The comment never exceeds MaxCommentBytes; checks
// left out for room are counted, with the run page to see them.
func PRComment(head string, reports []CommentReport) string {
	var b strings.Builder
	b.WriteString(CommentMarker + "\n")
	fmt.Fprintf(&b, "### Answer checks: %s\n\n", Headline(reports))
	if head != "" {
		fmt.Fprintf(&b, "Asked on `%s`, against the docs as served now.\n", shortCommit(head))
	}
	for _, cr := range reports {
		writeReport(&b, cr, len(reports) > 1)
	}
	return b.String()
}

// reserve is the room kept for a section's closing lines.
const reserve = 1_000

func writeReport(b *strings.Builder, cr CommentReport, titled bool) {
	r := cr.Report
	b.WriteString("\n")
	if titled {
		fmt.Fprintf(b, "#### %s: %s\n\n", inert(cr.Domain), r.Summary())
	}
	t := r.Totals
	fmt.Fprintf(b, "%d checks: %d pass, %d fail; %d newly answered, %d regressed, %d unchanged, %d new.\n",
		t.Checks, t.Passed, t.Failed, t.NewlyAnswered, t.Regressed, t.Unchanged, t.Added)
	left := 0
	for _, group := range []struct {
		change Change
		title  string
	}{
		{Regressed, "Regressed"},
		{NewlyAnswered, "Newly answered"},
	} {
		var items []string
		for _, c := range r.Checks {
			if c.Change == group.change {
				items = append(items, checkItem(c, cr.SiteURL))
			}
		}
		if len(items) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n**%s**\n\n", group.title)
		for i, item := range items {
			if b.Len()+len(item)+reserve > MaxCommentBytes {
				left += len(items) - i
				break
			}
			b.WriteString(item)
		}
	}
	if left > 0 {
		fmt.Fprintf(b, "\n%d more not shown here for room; the run page lists every check.\n", left)
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n**Problems with the checks**\n\n")
		for i, p := range r.Problems {
			if i == maxProblemsShown || b.Len()+reserve > MaxCommentBytes {
				fmt.Fprintf(b, "- and %d more\n", len(r.Problems)-i)
				break
			}
			fmt.Fprintf(b, "- %s\n", inert(p))
		}
	}
	if cr.RunURL != "" {
		fmt.Fprintf(b, "\n[Every check of this run](%s)\n", linkTarget(cr.RunURL))
	}
}

// checkItem is one check as a list item: its name and question, then its
// answer before and after.
func checkItem(c Compared, siteURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- **%s**: %s\n", inert(c.After.Check.Name), inert(c.After.Check.Question))
	if c.Before != nil {
		fmt.Fprintf(&b, "  - before: %s\n", answerLine(*c.Before, siteURL))
	}
	fmt.Fprintf(&b, "  - after: %s\n", answerLine(c.After, siteURL))
	if !c.After.Pass && len(c.After.Failures) > 0 {
		fmt.Fprintf(&b, "  - why it fails: %s\n", inert(strings.Join(c.After.Failures, "; ")))
	}
	return b.String()
}

// answerLine is an answer's status and the pages it cited.
func answerLine(r Result, siteURL string) string {
	line := statusWords(r.Answer.Status)
	if len(r.Answer.Cited) == 0 {
		return line + ", citing nothing"
	}
	var cited []string
	seen := map[string]bool{}
	for _, p := range r.Answer.Cited {
		page := PagePath(p)
		if seen[page] || page == "" {
			continue
		}
		seen[page] = true
		if len(cited) == maxCitedInLine {
			cited = append(cited, "…")
			break
		}
		cited = append(cited, pageLink(page, siteURL))
	}
	return line + ", citing " + strings.Join(cited, ", ")
}

// pageLink links a cited page on the docs site, or names it when the
// domain has no site URL.
func pageLink(page, siteURL string) string {
	if siteURL == "" {
		return "`" + strings.ReplaceAll(clipRunes(page, 200), "`", "'") + "`"
	}
	return fmt.Sprintf("[%s](%s)", inert(page), linkTarget(search.PageURL(siteURL, page)))
}

// linkTarget keeps a URL from ending the Markdown link it is put in.
func linkTarget(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "\n", "", "\r", "").Replace(u)
}

// inertReplacer escapes what Markdown or HTML would read in quoted text.
var inertReplacer = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	"\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]",
	"#", "\\#", "|", "\\|", "~", "\\~", "!", "\\!",
	// A zero-width space keeps @name and #123 from notifying anyone or
	// linking an issue.
	"@", "@\u200b",
	"\r\n", " ", "\n", " ", "\r", " ", "\t", " ",
)

// inert quotes text from outside (a checks file, an answer, a forge) on
// one line, shortened, so that it renders as the words it is.
func inert(s string) string {
	return inertReplacer.Replace(clipRunes(strings.TrimSpace(s), maxQuotedRunes))
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func shortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
