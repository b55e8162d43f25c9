// Package answercheck is what an answer check is and how one is judged: a
// question with what a good answer to it must do (cite one of some pages,
// hold some words, or say that the docs do not cover it), the answer the
// assistant gave, and whether that answer passes. It compares two runs of
// the same checks (the served index and a candidate, a pull request's head
// say) check by check: newly answered, regressed, unchanged.
package answercheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/docsmith/docsmith/internal/assistant"
)

// Where a check comes from.
const (
	// OriginFile is a check of the docs repository's checks file.
	OriginFile = "file"
	// OriginUpvote is a question a reader rated up: its answer must cite
	// the page it cited then.
	OriginUpvote = "upvote"
	// OriginGap is a question of a content gap: its answer must say the
	// docs cover it, once a fix lands.
	OriginGap = "gap"
)

// Check is one question and what a good answer to it must do.
type Check struct {
	// Name names the check in reports; it is unique within a run.
	Name     string `json:"name"`
	Question string `json:"question"`
	// Cite passes when one of these pages (paths as the index knows them,
	// without a leading slash) is among the answer's citations.
	Cite []string `json:"cite,omitempty"`
	// Contains passes when the answer's text holds every one of these, in
	// any case.
	Contains []string `json:"contains,omitempty"`
	// NotCovered passes when the answer says the docs do not cover the
	// question; it excludes Cite and Contains.
	NotCovered bool `json:"notCovered,omitempty"`
	// Answered passes when the answer says the docs cover the question,
	// wholly (status answered); a gap's check asks for it.
	Answered bool `json:"answered,omitempty"`
	// Origin is where the check comes from (OriginFile, …); ID is its
	// stored id for a check kept from traffic, "" for a file's.
	Origin string `json:"origin"`
	ID     string `json:"id,omitempty"`
}

// Answer is what the assistant answered to a check's question, as a reader
// received it.
type Answer struct {
	// Status is the answer's status: assistant.StatusAnswered, Partial or
	// NotCovered.
	Status string `json:"status"`
	Text   string `json:"text"`
	// Cited are the pages of the answer's citations, in order.
	Cited []string `json:"cited"`
}

// Result is a check judged against an answer.
type Result struct {
	Check  Check  `json:"check"`
	Answer Answer `json:"answer"`
	Pass   bool   `json:"pass"`
	// Failures say what the answer lacked, one line each; empty when it
	// passed.
	Failures []string `json:"failures,omitempty"`
}

// Judge says whether a passes c, and if not, why.
func Judge(c Check, a Answer) Result {
	r := Result{Check: c, Answer: a}
	if c.NotCovered {
		if a.Status != assistant.StatusNotCovered {
			r.Failures = append(r.Failures, fmt.Sprintf("expected the answer to say the docs do not cover this; it was %s", statusWords(a.Status)))
		}
		r.Pass = len(r.Failures) == 0
		return r
	}
	if a.Status == assistant.StatusNotCovered {
		r.Failures = append(r.Failures, "the answer said the docs do not cover this")
	} else if c.Answered && a.Status != assistant.StatusAnswered {
		r.Failures = append(r.Failures, fmt.Sprintf("expected an answer; it was %s", statusWords(a.Status)))
	}
	if len(c.Cite) > 0 && !citesAny(a.Cited, c.Cite) {
		cited := "nothing"
		if len(a.Cited) > 0 {
			cited = strings.Join(a.Cited, ", ")
		}
		r.Failures = append(r.Failures, fmt.Sprintf("expected a citation of %s; it cited %s", strings.Join(c.Cite, " or "), cited))
	}
	lower := strings.ToLower(a.Text)
	for _, w := range c.Contains {
		if !strings.Contains(lower, strings.ToLower(w)) {
			r.Failures = append(r.Failures, fmt.Sprintf("expected the answer to contain %q", w))
		}
	}
	r.Pass = len(r.Failures) == 0
	return r
}

// citesAny reports whether one of want is among cited. Paths compare
// without a leading slash or an anchor.
func citesAny(cited, want []string) bool {
	return slices.ContainsFunc(cited, func(p string) bool {
		return slices.ContainsFunc(want, func(w string) bool { return PagePath(p) == PagePath(w) })
	})
}

// PagePath is a cited or expected page as checks compare them: without a
// leading slash, an anchor or a trailing ".mdx"/".md".
func PagePath(p string) string {
	p, _, _ = strings.Cut(strings.TrimSpace(p), "#")
	p = strings.Trim(p, "/")
	for _, ext := range []string{".mdx", ".md"} {
		p = strings.TrimSuffix(p, ext)
	}
	return p
}

func statusWords(status string) string {
	switch status {
	case assistant.StatusAnswered:
		return "answered"
	case assistant.StatusPartial:
		return "answered in part"
	case assistant.StatusNotCovered:
		return "not covered"
	case "":
		return "without a status"
	}
	return status
}
