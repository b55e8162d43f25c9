package checkwatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/tenant"
)

// An alert's body is a message a Slack incoming webhook posts as it is:
// text (the notification's words), blocks (the message), and Slack's
// message metadata, whose event_payload carries the machine-readable
// fields another receiver reads. Slack documents each of the three
// top-level fields; nothing else is sent at the top level.
type alertBody struct {
	Text     string        `json:"text"`
	Blocks   []block       `json:"blocks"`
	Metadata alertMetadata `json:"metadata"`
}

type block struct {
	Type     string  `json:"type"`
	Text     *mrkdwn `json:"text,omitempty"`
	Elements []any   `json:"elements,omitempty"`
}

type mrkdwn struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type alertMetadata struct {
	EventType    string       `json:"event_type"`
	EventPayload alertPayload `json:"event_payload"`
}

// alertPayload is what a program reads of an alert. Slack's metadata
// holds strings, numbers, booleans, objects of those and lists of such
// objects, so the regressions are a list of objects.
type alertPayload struct {
	Domain    string `json:"domain"`
	RunID     string `json:"run_id"`
	RunURL    string `json:"run_url"`
	StartedAt string `json:"started_at"`
	Commit    string `json:"commit,omitempty"`
	Checks    int    `json:"checks"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	// Regressed counts them all; Regressions lists at most
	// maxPayloadRegressions.
	Regressed   int          `json:"regressed"`
	Regressions []regression `json:"regressions"`
}

type regression struct {
	Name     string `json:"name"`
	Question string `json:"question"`
	Origin   string `json:"origin"`
	// Failure is why the answer fails now, its reasons joined by "; ".
	Failure string `json:"failure"`
}

// Bounds of an alert, well inside Slack's: 50 blocks, 3,000 characters
// of text in a section.
const (
	maxListedRegressions  = 10
	maxPayloadRegressions = 50
	maxFieldRunes         = 300
)

// metadataEventType is the alert's Slack metadata event type.
const metadataEventType = "docsmith_checks_regressed"

// AlertBody is the JSON an alert of a scheduled run's regressions sends;
// link is the run's page in the dashboard (absolute when the server knows
// its public URL).
func AlertBody(d tenant.Domain, run checkrun.Run, regressed []answercheck.Compared, link string) ([]byte, error) {
	t := run.Report.Totals
	noun := "checks"
	if len(regressed) == 1 {
		noun = "check"
	}
	headline := fmt.Sprintf("%s: %d %s of the live assistant regressed: they passed on the last scheduled run and fail now (%d of %d checks pass).",
		d.ID, len(regressed), noun, t.Passed, t.Checks)
	absolute := strings.HasPrefix(link, "https://") || strings.HasPrefix(link, "http://")
	text := headline
	if absolute {
		text += " " + link
	}

	var list strings.Builder
	for i, c := range regressed {
		if i == maxListedRegressions {
			fmt.Fprintf(&list, "…and %d more.\n", len(regressed)-maxListedRegressions)
			break
		}
		fmt.Fprintf(&list, "• *%s*: %s\n      _%s_\n", escape(clip(c.After.Check.Name)), escape(clip(c.After.Check.Question)), escape(clip(failure(c))))
	}
	blocks := []block{
		{Type: "section", Text: &mrkdwn{Type: "mrkdwn", Text: escape(headline)}},
		{Type: "section", Text: &mrkdwn{Type: "mrkdwn", Text: strings.TrimSuffix(list.String(), "\n")}},
	}
	if absolute {
		blocks = append(blocks, block{Type: "context", Elements: []any{mrkdwn{Type: "mrkdwn", Text: "<" + link + "|Open the run in the docsmith dashboard>"}}})
	}

	payload := alertPayload{Domain: d.ID, RunID: run.ID, RunURL: link, StartedAt: run.Report.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
		Commit: run.Report.BaseCommit, Checks: t.Checks, Passed: t.Passed, Failed: t.Failed, Regressed: len(regressed), Regressions: []regression{}}
	for i, c := range regressed {
		if i == maxPayloadRegressions {
			break
		}
		payload.Regressions = append(payload.Regressions, regression{Name: clip(c.After.Check.Name), Question: clip(c.After.Check.Question),
			Origin: c.After.Check.Origin, Failure: clip(failure(c))})
	}
	return json.Marshal(alertBody{Text: text, Blocks: blocks, Metadata: alertMetadata{EventType: metadataEventType, EventPayload: payload}})
}

// failure is why a regressed check fails now.
func failure(c answercheck.Compared) string {
	if len(c.After.Failures) == 0 {
		return "it fails now"
	}
	return strings.Join(c.After.Failures, "; ")
}

// escape makes text from outside (readers' questions, answers) plain in
// Slack's mrkdwn: its control characters &, < and > are escaped, so a
// question can neither mention a channel nor make a link.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip bounds a field of an alert to maxFieldRunes characters, on one
// line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxFieldRunes {
		return s
	}
	r := []rune(s)
	return string(r[:maxFieldRunes-1]) + "…"
}
