package agentrun

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// firstLine returns s's first non-empty line, cut to max runes.
func firstLine(s string, maxRunes int) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxRunes {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:maxRunes-1])) + "…"
		}
		return line
	}
	return ""
}

// prTitle is the first line of the job's first instruction.
func prTitle(prompt string) string {
	if t := firstLine(prompt, 72); t != "" {
		return t
	}
	return "Docs update"
}

// commitMessage: the instruction as the subject, the summary as the body.
func commitMessage(prompt, summary string) string {
	subject := firstLine(prompt, 72)
	if subject == "" {
		subject = "Update docs"
	}
	if summary = strings.TrimSpace(summary); summary == "" {
		return subject
	}
	return subject + "\n\n" + summary
}

func turnMarker(seq int) string { return fmt.Sprintf("<!-- docsmith:turn %d -->", seq) }

// turnSection describes one turn in the pull request body. Its marker keeps
// a retried turn from adding itself twice.
func turnSection(m agentjob.Message, summary string, files []string, at time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### Turn %d (%s)\n\n", turnMarker(m.Seq), m.Seq, at.UTC().Format("2006-01-02 15:04 MST"))
	for _, line := range strings.Split(strings.TrimSpace(m.Prompt), "\n") {
		fmt.Fprintf(&b, "> %s\n", line)
	}
	if summary = strings.TrimSpace(summary); summary != "" {
		fmt.Fprintf(&b, "\n%s\n", summary)
	}
	if len(files) > 0 {
		b.WriteString("\nFiles changed:\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- `%s`\n", f)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// prBody is the body of a new pull request.
func prBody(summary string, files []string, section string) string {
	var b strings.Builder
	if summary = strings.TrimSpace(summary); summary != "" {
		fmt.Fprintf(&b, "%s\n\n", summary)
	}
	b.WriteString("### Files changed\n\n")
	for _, f := range files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	b.WriteString("\n_Opened by docsmith. Send a follow-up message to the job to add commits to this pull request._\n\n")
	b.WriteString(section)
	return b.String()
}
