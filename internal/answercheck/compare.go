package answercheck

import (
	"fmt"
	"time"
)

// Change is how a check's result moved from the served index to the
// candidate.
type Change string

const (
	// NewlyAnswered failed on the served index and passes on the candidate.
	NewlyAnswered Change = "newly_answered"
	// Regressed passed on the served index and fails on the candidate.
	Regressed Change = "regressed"
	// Unchanged passes on both or fails on both.
	Unchanged Change = "unchanged"
	// Added has no result on the served index (the check is new with the
	// candidate, or there was no served index to ask).
	Added Change = "added"
)

// Compared is one check's result on the served index (Before, nil when
// there was none) and on the candidate (After).
type Compared struct {
	Before *Result `json:"before,omitempty"`
	After  Result  `json:"after"`
	Change Change  `json:"change"`
}

// Pass reports whether the check passes on the candidate.
func (c Compared) Pass() bool { return c.After.Pass }

// Report is one run of a domain's checks.
type Report struct {
	Domain string `json:"domain"`
	// Ref is the ref the candidate index was built from ("" when the run
	// asked the served index alone, as a schedule does); Commit the commit
	// it read.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	// BaseCommit is the commit the served index was built from.
	BaseCommit string     `json:"baseCommit,omitempty"`
	Checks     []Compared `json:"checks"`
	Totals     Totals     `json:"totals"`
	// Problems are the checks file's errors and the checks left out,
	// one line each; a run with problems still runs the valid checks.
	Problems []string `json:"problems,omitempty"`
	// IndexDuration is how long the candidate index took to build,
	// AnswerDuration how long the answers took, both sides.
	IndexDuration  time.Duration `json:"indexDurationNs"`
	AnswerDuration time.Duration `json:"answerDurationNs"`
	StartedAt      time.Time     `json:"startedAt"`
}

// Totals count a report's checks.
type Totals struct {
	Checks        int `json:"checks"`
	Passed        int `json:"passed"`
	Failed        int `json:"failed"`
	NewlyAnswered int `json:"newlyAnswered"`
	Regressed     int `json:"regressed"`
	Unchanged     int `json:"unchanged"`
	Added         int `json:"added"`
}

// Compare pairs each check's result on the candidate (after) with its
// result on the served index (before, matched by check name; nil or
// shorter when the served index was not asked) and counts the changes.
func Compare(before, after []Result) ([]Compared, Totals) {
	byName := make(map[string]*Result, len(before))
	for i := range before {
		byName[before[i].Check.Name] = &before[i]
	}
	out := make([]Compared, 0, len(after))
	var t Totals
	for _, a := range after {
		c := Compared{After: a, Before: byName[a.Check.Name]}
		switch {
		case c.Before == nil:
			c.Change = Added
			t.Added++
		case !c.Before.Pass && a.Pass:
			c.Change = NewlyAnswered
			t.NewlyAnswered++
		case c.Before.Pass && !a.Pass:
			c.Change = Regressed
			t.Regressed++
		default:
			c.Change = Unchanged
			t.Unchanged++
		}
		if a.Pass {
			t.Passed++
		} else {
			t.Failed++
		}
		out = append(out, c)
	}
	t.Checks = len(out)
	return out, t
}

// Summary is the report in one line, as a commit status or a comment's
// headline says it: "4 reader questions now answered, 0 regressed".
func (r Report) Summary() string {
	t := r.Totals
	if r.Ref == "" {
		return fmt.Sprintf("%d of %d checks pass, %d regressed", t.Passed, t.Checks, t.Regressed)
	}
	noun := "questions"
	if t.NewlyAnswered == 1 {
		noun = "question"
	}
	return fmt.Sprintf("%d reader %s now answered, %d regressed", t.NewlyAnswered, noun, t.Regressed)
}
