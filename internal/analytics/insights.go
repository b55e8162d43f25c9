package analytics

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
)

// Insights sums up a domain's questions over a range.
type Insights struct {
	Questions int `json:"questions"`
	// Answered, Partial and NotCovered count the answers by status (a
	// failed or canceled answer is in none).
	Answered   int `json:"answered"`
	Partial    int `json:"partial"`
	NotCovered int `json:"notCovered"`
	// NotCoveredShare is NotCovered / Questions (0 without questions).
	NotCoveredShare float64    `json:"notCoveredShare"`
	FeedbackUp      int        `json:"feedbackUp"`
	FeedbackDown    int        `json:"feedbackDown"`
	PerDay          []DayCount `json:"perDay"`
	TopPages        []Count    `json:"topPages"`
	TopQuestions    []Count    `json:"topQuestions"`
	// AnsweredSinceClosed counts the questions of the range answered after
	// their gap closed: asked after the close, of the closed gap by the
	// relation that groups gaps, answered and not rated down.
	AnsweredSinceClosed int `json:"answeredSinceClosed"`
	// Truncated says the range held more than MaxScanTurns questions and
	// only the newest were counted.
	Truncated bool `json:"truncated,omitempty"`
}

// DayCount is the questions of one UTC day.
type DayCount struct {
	Day        string `json:"day"` // YYYY-MM-DD
	Questions  int    `json:"questions"`
	Partial    int    `json:"partial"`
	NotCovered int    `json:"notCovered"`
}

// Count is a value and how often it came.
type Count struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// TopN is how many pages and questions Insights lists.
const TopN = 10

// Insights returns the domain's figures over r.
func (s *Service) Insights(ctx context.Context, domain string, r Range) (Insights, error) {
	if err := CheckRange(r); err != nil {
		return Insights{}, err
	}
	turns, err := s.domainTurns(ctx, domain, r)
	if err != nil {
		return Insights{}, err
	}
	in := computeInsights(turns)
	ls, err := s.GapLifecycles(ctx, domain)
	if err != nil {
		return Insights{}, err
	}
	in.AnsweredSinceClosed = AnsweredSinceClosed(turns, ls)
	return in, nil
}

func computeInsights(turns []TurnRecord) Insights {
	in := Insights{PerDay: []DayCount{}, Truncated: len(turns) >= MaxScanTurns}
	days := map[string]*DayCount{}
	pages := map[string]int{}
	questions := map[string]int{}
	shown := map[string]string{} // normalized question -> first wording
	for _, t := range turns {
		in.Questions++
		day := t.CreatedAt.UTC().Format(time.DateOnly)
		d := days[day]
		if d == nil {
			d = &DayCount{Day: day}
			days[day] = d
		}
		d.Questions++
		switch t.Status {
		case assistant.TurnAnswered:
			in.Answered++
		case assistant.TurnPartial:
			in.Partial++
			d.Partial++
		case assistant.TurnNotCovered:
			in.NotCovered++
			d.NotCovered++
		}
		switch t.Rating {
		case RatingUp:
			in.FeedbackUp++
		case RatingDown:
			in.FeedbackDown++
		}
		seen := map[string]bool{}
		for _, src := range t.Sources {
			if src.Path != "" && !seen[src.Path] {
				seen[src.Path] = true
				pages[src.Path]++
			}
		}
		norm := normalizeQuestion(t.Question)
		if norm == "" {
			continue
		}
		questions[norm]++
		if _, ok := shown[norm]; !ok {
			shown[norm] = strings.TrimSpace(t.Question)
		}
	}
	if in.Questions > 0 {
		in.NotCoveredShare = float64(in.NotCovered) / float64(in.Questions)
	}
	for _, d := range days {
		in.PerDay = append(in.PerDay, *d)
	}
	sort.Slice(in.PerDay, func(i, j int) bool { return in.PerDay[i].Day < in.PerDay[j].Day })
	in.TopPages = top(pages, nil)
	in.TopQuestions = top(questions, shown)
	return in
}

// normalizeQuestion folds case, punctuation and spacing, so "How do I
// log in?" and "how do i log in" count as one question.
func normalizeQuestion(q string) string {
	return strings.Join(words(q), " ")
}

// top returns the TopN most frequent values, ties in alphabetical order;
// label, when given, maps a value to what is shown.
func top(counts map[string]int, label map[string]string) []Count {
	out := make([]Count, 0, len(counts))
	for v, n := range counts {
		out = append(out, Count{Value: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Value < out[j].Value
	})
	if len(out) > TopN {
		out = out[:TopN]
	}
	for i := range out {
		if l, ok := label[out[i].Value]; ok {
			out[i].Value = l
		}
	}
	return out
}
