package analytics

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BuiltinModel is the agent model that needs no LLM: it runs a small
// command language and cannot write prose.
const BuiltinModel = "builtin"

// DraftBuiltinPrompt is the instruction a gap suggests to the builtin
// model, which cannot write the documentation readers asked for: one
// command that adds a page titled after the gap, listed in the navigation
// group group, for a writer to fill in on the job's branch. The readers'
// questions go in a Markdown comment, which the builtin model skips.
func DraftBuiltinPrompt(g Gap, group string) string {
	var b strings.Builder
	b.WriteString("<!--\nThe builtin model runs commands; it cannot write the documentation these questions need.\n")
	b.WriteString("The command below adds an empty page to the navigation, for a writer to fill in on the job's branch:\n")
	n := 0
	for _, q := range g.Questions {
		if n == 10 {
			break
		}
		// A "--" could end the comment early.
		text := normalizeSpace(strings.ReplaceAll(q.Question, "--", "-"))
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s", text)
		if c := normalizeSpace(strings.ReplaceAll(q.Comment, "--", "-")); c != "" {
			fmt.Fprintf(&b, " (reader's comment: %s)", c)
		}
		b.WriteString("\n")
		n++
	}
	b.WriteString("-->\n")
	fmt.Fprintf(&b, "add page %s titled %s to group %s", BuiltinPagePath(g), quoteCommand(builtinTitle(g)), quoteCommand(group))
	return b.String()
}

// BuiltinPagePath is where the builtin draft adds the gap's page: beside
// the gap's top page, named by its terms.
func BuiltinPagePath(g Gap) string {
	var parts []string
	for _, t := range g.Terms {
		var w strings.Builder
		for _, r := range strings.ToLower(t) {
			if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				w.WriteRune(r)
			}
		}
		if w.Len() > 0 {
			parts = append(parts, w.String())
		}
	}
	slug := strings.Join(parts, "-")
	if slug == "" {
		slug = "new-page"
	}
	if dir := path.Dir(g.TopPage); g.TopPage != "" && dir != "." && !strings.HasPrefix(dir, "-") {
		return dir + "/" + slug
	}
	return slug
}

func builtinTitle(g Gap) string {
	title := strings.Join(g.Terms, " ")
	if title == "" {
		return "New page"
	}
	r, size := utf8.DecodeRuneInString(title)
	return string(unicode.ToUpper(r)) + title[size:]
}

// quoteCommand writes s as a builtin command's quoted text.
func quoteCommand(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}
