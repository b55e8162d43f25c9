package analytics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
)

// A gap's lifecycle states. A gap with no job is open; a job started from
// it puts it in progress; once the job's commits are on the branch the
// domain reads and its questions are answered on the new index, it is
// closed, with the answers as proof; if any is still not answered, it is
// reopened, with what the assistant said.
const (
	GapOpen       = "open"
	GapInProgress = "in_progress"
	GapClosed     = "closed"
	GapReopened   = "reopened"
)

// MaxLifecycleQuestions bounds the questions a gap's lifecycle keeps and
// asks again: the newest of the gap when its job was linked.
const MaxLifecycleQuestions = 10

// GapLifecycle is what happened to a gap once a job was started from it,
// kept per domain and key: the gap's questions and terms at that moment,
// its state, its job, and the answers of its last check.
type GapLifecycle struct {
	Domain    string    `json:"-"`
	Key       string    `json:"-"`
	State     string    `json:"state"`
	Terms     []string  `json:"terms"`
	TopPage   string    `json:"topPage,omitempty"`
	Questions []string  `json:"questions"`
	ProjectID string    `json:"projectId"`
	JobID     string    `json:"jobId"`
	LinkedAt  time.Time `json:"linkedAt"`
	// CheckedCommit is the commit of the index the questions were last
	// asked on, and CheckedPush the job's newest pushed commit then: a
	// rebuild at the same commit, or a reopened gap whose job pushed
	// nothing since, is not asked again.
	CheckedCommit string     `json:"checkedCommit,omitempty"`
	CheckedPush   string     `json:"-"`
	CheckedAt     *time.Time `json:"checkedAt,omitempty"`
	// ClosedAt is when the gap closed; nil unless closed.
	ClosedAt *time.Time `json:"closedAt,omitempty"`
	// Answers are the answers of the last check: the proof of a closed
	// gap, what the assistant said for a reopened one.
	Answers   []GapAnswer `json:"answers,omitempty"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// GapAnswer is a gap's question asked again on a new index, and what the
// assistant answered.
type GapAnswer struct {
	Question string `json:"question"`
	// Status is the answer's status: answered, partial or not_covered.
	Status string `json:"status"`
	Text   string `json:"text"`
	// Cited are the pages the answer cited, in order.
	Cited []string `json:"cited,omitempty"`
	// Commit is the commit of the index that answered.
	Commit string    `json:"commit"`
	At     time.Time `json:"at"`
}

// CitedPage is the first page the answer cited, "" without any.
func (a GapAnswer) CitedPage() string {
	if len(a.Cited) == 0 {
		return ""
	}
	return a.Cited[0]
}

// Proved reports whether every answer of the check says the docs answer
// its question: the proof a gap closes on.
func Proved(answers []GapAnswer) bool {
	if len(answers) == 0 {
		return false
	}
	for _, a := range answers {
		if a.Status != assistant.StatusAnswered {
			return false
		}
	}
	return true
}

// LifecycleStore keeps gaps' lifecycles.
type LifecycleStore interface {
	// StartGapLifecycle records that l.JobID was started from the gap: a
	// new lifecycle in progress, or the existing one of (domain, key) in
	// progress again with this job, its questions and terms, and no check.
	StartGapLifecycle(ctx context.Context, l GapLifecycle) error
	// GapLifecycles returns the domain's lifecycles, the latest linked
	// first.
	GapLifecycles(ctx context.Context, domain string) ([]GapLifecycle, error)
	// RecordGapCheck writes the state, check and answers of l to the
	// lifecycle of (domain, key) while its job is still l.JobID; otherwise
	// (another job linked meanwhile, or none) an apperr Conflict, NotFound.
	RecordGapCheck(ctx context.Context, l GapLifecycle) error
}

// StartGapWork links a job to the gap g and starts (or restarts) the
// gap's lifecycle with g's questions and terms as they are now.
func (s *Service) StartGapWork(ctx context.Context, link GapJob, g Gap) error {
	if err := s.LinkGapJob(ctx, link); err != nil {
		return err
	}
	l := GapLifecycle{
		Domain: link.Domain, Key: link.GapKey, State: GapInProgress,
		Terms: g.Terms, TopPage: g.TopPage, Questions: lifecycleQuestions(g),
		ProjectID: link.ProjectID, JobID: link.JobID, LinkedAt: link.CreatedAt, UpdatedAt: link.CreatedAt,
	}
	if err := s.store.StartGapLifecycle(ctx, l); err != nil {
		return fmt.Errorf("start the lifecycle of gap %s: %w", link.GapKey, err)
	}
	return nil
}

// lifecycleQuestions are the distinct questions of g (newest first) that
// its lifecycle keeps.
func lifecycleQuestions(g Gap) []string {
	out := []string{}
	for _, q := range g.Questions {
		if len(out) == MaxLifecycleQuestions {
			break
		}
		text := normalizeSpace(q.Question)
		if text != "" && !slices.Contains(out, text) {
			out = append(out, text)
		}
	}
	return out
}

// GapLifecycles returns the domain's gaps' lifecycles, the latest linked
// first.
func (s *Service) GapLifecycles(ctx context.Context, domain string) ([]GapLifecycle, error) {
	ls, err := s.store.GapLifecycles(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("read the lifecycles of the gaps of %s: %w", domain, err)
	}
	return ls, nil
}

// RecordGapCheck writes the outcome of asking a gap's questions again.
func (s *Service) RecordGapCheck(ctx context.Context, l GapLifecycle) error {
	if err := s.store.RecordGapCheck(ctx, l); err != nil {
		return fmt.Errorf("record the check of gap %s: %w", l.Key, err)
	}
	return nil
}

// attachLifecycles gives each gap its lifecycle: the one of its key, or
// else one whose questions it holds (a gap's key depends on the range read,
// its questions do not). It returns the lifecycles no gap took, closed
// ones first: a gap whose questions left the range, still shown.
func attachLifecycles(gaps []Gap, ls []GapLifecycle) []GapLifecycle {
	taken := make([]bool, len(ls))
	byKey := map[string]int{}
	for i, l := range ls {
		if _, ok := byKey[l.Key]; !ok {
			byKey[l.Key] = i
		}
	}
	for i := range gaps {
		j, ok := byKey[gaps[i].Key]
		if !ok || taken[j] {
			j = -1
			for k, l := range ls {
				if !taken[k] && sharesQuestion(gaps[i], l) {
					j = k
					break
				}
			}
		}
		if j >= 0 {
			taken[j] = true
			l := ls[j]
			gaps[i].Lifecycle = &l
		}
	}
	var rest []GapLifecycle
	for i, l := range ls {
		if !taken[i] {
			rest = append(rest, l)
		}
	}
	slices.SortStableFunc(rest, func(a, b GapLifecycle) int {
		if (a.State == GapClosed) != (b.State == GapClosed) {
			if a.State == GapClosed {
				return -1
			}
			return 1
		}
		return 0
	})
	return rest
}

func sharesQuestion(g Gap, l GapLifecycle) bool {
	for _, q := range g.Questions {
		if slices.Contains(l.Questions, normalizeSpace(q.Question)) {
			return true
		}
	}
	return false
}

// lifecycleGap is a gap shown for a lifecycle no gap of the range took:
// its questions as they were when its job was linked.
func lifecycleGap(l GapLifecycle) Gap {
	g := Gap{Key: l.Key, Terms: l.Terms, TopPage: l.TopPage, Questions: []GapQuestion{}, Outside: true}
	for _, q := range l.Questions {
		g.Questions = append(g.Questions, GapQuestion{Question: q, Reasons: []string{}})
	}
	g.Lifecycle = &l
	return g
}

// belongsToGap reports whether a question belongs to a gap of the
// questions gapQuestions with top page topPage, by the relation grouping
// uses: two shared key terms, or one and the same top page, or a question
// of a single key term that the other has.
func belongsToGap(terms []string, top string, gap [][]string, gapTop string) bool {
	if len(terms) == 0 {
		return false
	}
	for _, g := range gap {
		shared := 0
		for _, t := range terms {
			if slices.Contains(g, t) {
				shared++
			}
		}
		switch {
		case shared >= 2:
			return true
		case shared == 1 && (len(terms) == 1 || len(g) == 1):
			return true
		case shared == 1 && top != "" && top == gapTop:
			return true
		}
	}
	return false
}

// AnsweredSinceClosed counts, over turns, the questions answered after their
// gap closed: turns asked after a closed lifecycle's close, answered (and not
// rated down), that belong to its gap.
func AnsweredSinceClosed(turns []TurnRecord, ls []GapLifecycle) int {
	type closedGap struct {
		at    time.Time
		terms [][]string
		top   string
	}
	var closed []closedGap
	for _, l := range ls {
		if l.State != GapClosed || l.ClosedAt == nil {
			continue
		}
		c := closedGap{at: *l.ClosedAt, top: l.TopPage}
		for _, q := range l.Questions {
			c.terms = append(c.terms, KeyTerms(q))
		}
		closed = append(closed, c)
	}
	if len(closed) == 0 {
		return 0
	}
	n := 0
	for _, t := range turns {
		if t.Status != assistant.TurnAnswered || t.Rating == RatingDown {
			continue
		}
		terms := KeyTerms(t.Question)
		if len(terms) > maxGroupTerms {
			terms = terms[:maxGroupTerms]
		}
		for _, c := range closed {
			if t.CreatedAt.After(c.at) && belongsToGap(terms, t.TopPage(), c.terms, c.top) {
				n++
				break
			}
		}
	}
	return n
}
