package analytics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/docsmith/docsmith/internal/assistant"
)

// Why a question counts toward a content gap.
const (
	ReasonNotCovered = "not_covered"   // the assistant found nothing relevant
	ReasonPartial    = "partial"       // the docs covered part of the question
	ReasonLowScore   = "low_retrieval" // answered, but from a weak match
	ReasonDownvoted  = "downvoted"     // the reader rated the answer down
)

// Gap is one need the docs do not meet: the flagged questions that share
// key terms (and often a page), shown once.
type Gap struct {
	// Key names the gap across reads: its label terms joined by '+'.
	Key string `json:"key"`
	// Terms are the group's most frequent key terms as readers wrote them,
	// its label.
	Terms []string `json:"terms"`
	// TopPage is the page retrieval ranked first most often, "" when
	// nothing was found.
	TopPage    string        `json:"topPage,omitempty"`
	Count      int           `json:"count"`
	NotCovered int           `json:"notCovered"`
	Partial    int           `json:"partial"`
	LowScore   int           `json:"lowRetrieval"`
	Downvoted  int           `json:"downvoted"`
	LastAsked  time.Time     `json:"lastAsked"`
	Questions  []GapQuestion `json:"questions"`
	Jobs       []GapJob      `json:"-"`
	// State is the gap's lifecycle state (GapOpen, …) and Lifecycle what
	// happened since a job was started from it (nil before).
	State     string        `json:"state"`
	Lifecycle *GapLifecycle `json:"lifecycle,omitempty"`
	// Outside says none of the gap's questions is in the range read: it
	// is shown for its lifecycle (a closed gap stays in the list), with
	// its questions as they were when its job was linked.
	Outside bool `json:"outsideRange,omitempty"`
}

// GapQuestion is one flagged question of a gap.
type GapQuestion struct {
	ThreadID string    `json:"threadId"`
	Seq      int       `json:"seq"`
	Question string    `json:"question"`
	Reasons  []string  `json:"reasons"`
	Comment  string    `json:"comment,omitempty"`
	AskedAt  time.Time `json:"askedAt"`
}

// maxGapQuestions bounds the questions a gap lists (Count has them all).
const maxGapQuestions = 20

// labelTerms is how many terms name a gap.
const labelTerms = 3

// MaxGapQuestions bounds the flagged questions Gaps groups: over a range
// with more, the newest are grouped and the older left out.
const MaxGapQuestions = 10_000

// maxGroupTerms bounds the key terms of one question that grouping
// compares (its first ones), so that a very long question costs no more
// than a short one.
const maxGroupTerms = 24

// Gaps returns the domain's content gaps over r, the most asked first,
// each with the jobs started from it and its lifecycle; after them, the
// gaps with a lifecycle none of whose questions is in r, closed ones
// first.
//
// A question is flagged when its answer was "not covered", when it was
// answered from passages whose best retrieval score is under the low-score
// threshold, or when a reader rated it down. Flagged questions are grouped
// as follows, so that one need asked in different words shows once:
//
//   - each question's key terms are its words, lower-cased, without stop
//     words and words under three letters, with a plural ending dropped;
//   - two questions are the same need when they share two key terms, or
//     share one and have the same top page (the page retrieval ranked
//     first) or the same conversation (a follow-up), or when one has a
//     single key term and the other has it too;
//   - groups are the connected sets of that relation; a group is named by
//     its three most frequent terms (ties alphabetical), which is its key.
//
// Only the newest MaxGapQuestions flagged questions of the range are
// grouped, and of each question only its first maxGroupTerms key terms
// are compared.
func (s *Service) Gaps(ctx context.Context, domain string, r Range) ([]Gap, error) {
	if err := CheckRange(r); err != nil {
		return nil, err
	}
	turns, err := s.domainTurns(ctx, domain, r)
	if err != nil {
		return nil, err
	}
	gaps := groupGaps(turns, s.lowScore)
	links, err := s.store.GapJobs(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("read jobs of the gaps of %s: %w", domain, err)
	}
	byKey := map[string][]GapJob{}
	for _, l := range links {
		byKey[l.GapKey] = append(byKey[l.GapKey], l)
	}
	for i := range gaps {
		gaps[i].Jobs = byKey[gaps[i].Key]
	}
	ls, err := s.GapLifecycles(ctx, domain)
	if err != nil {
		return nil, err
	}
	for _, l := range attachLifecycles(gaps, ls) {
		g := lifecycleGap(l)
		g.Jobs = byKey[g.Key]
		gaps = append(gaps, g)
	}
	for i := range gaps {
		gaps[i].State = GapOpen
		if gaps[i].Lifecycle != nil {
			gaps[i].State = gaps[i].Lifecycle.State
		}
	}
	return gaps, nil
}

// LinkGapJob records that a job was started from the gap key.
func (s *Service) LinkGapJob(ctx context.Context, g GapJob) error {
	if err := s.store.LinkGapJob(ctx, g); err != nil {
		return fmt.Errorf("link job %s to gap %s: %w", g.JobID, g.GapKey, err)
	}
	return nil
}

// GapJobs returns the jobs started from the domain's gaps.
func (s *Service) GapJobs(ctx context.Context, domain string) ([]GapJob, error) {
	return s.store.GapJobs(ctx, domain)
}

type flagged struct {
	turn    TurnRecord
	reasons []string
	terms   []string
	words   map[string]string // term -> the word the reader wrote
	top     string
}

func reasonsFor(t TurnRecord, lowScore float64) []string {
	var rs []string
	switch {
	case t.Status == assistant.TurnNotCovered:
		rs = append(rs, ReasonNotCovered)
	case t.Status == assistant.TurnPartial:
		rs = append(rs, ReasonPartial)
	case t.Status == assistant.TurnAnswered && t.TopScore() < lowScore:
		rs = append(rs, ReasonLowScore)
	}
	if t.Rating == RatingDown {
		rs = append(rs, ReasonDownvoted)
	}
	return rs
}

func groupGaps(turns []TurnRecord, lowScore float64) []Gap {
	var qs []flagged
	for _, t := range turns {
		if rs := reasonsFor(t, lowScore); len(rs) > 0 {
			qs = append(qs, flagged{turn: t, reasons: rs})
		}
	}
	if len(qs) > MaxGapQuestions {
		// Turns come oldest first: keep the newest.
		qs = qs[len(qs)-MaxGapQuestions:]
	}
	for i := range qs {
		qs[i].terms, qs[i].words = keyTerms(qs[i].turn.Question)
		qs[i].top = qs[i].turn.TopPage()
	}
	groupOf := joinSameNeeds(qs)
	groups := map[int][]int{}
	var roots []int
	for i := range qs {
		r := groupOf[i]
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	gaps := make([]Gap, 0, len(roots))
	for _, r := range roots {
		gaps = append(gaps, makeGap(qs, groups[r]))
	}
	sort.SliceStable(gaps, func(i, j int) bool {
		if gaps[i].Count != gaps[j].Count {
			return gaps[i].Count > gaps[j].Count
		}
		if !gaps[i].LastAsked.Equal(gaps[j].LastAsked) {
			return gaps[i].LastAsked.After(gaps[j].LastAsked)
		}
		return gaps[i].Key < gaps[j].Key
	})
	return gaps
}

// needKey is what two questions of one need have in common: a pair of key
// terms (a < b), a term and a top page, a term and a conversation, or the
// term of a one-term question.
type needKey struct {
	kind byte
	a, b string
}

const (
	keyPair byte = iota
	keyPage
	keyThread
	keySingle
)

// joinSameNeeds returns, for each question, the index of a question that
// stands for its need (the same for all the questions of one need). Rather than comparing questions pairwise, each question lists
// the keys it would share with another question of the same need, and is
// joined to the first question that holds each key: O(N·k²) for N
// questions of up to k (maxGroupTerms) key terms each.
func joinSameNeeds(qs []flagged) []int {
	parent := make([]int, len(qs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		if ri, rj := find(i), find(j); ri != rj {
			parent[ri] = rj
		}
	}
	holder := map[needKey]int{}
	join := func(i int, k needKey) {
		if j, ok := holder[k]; ok {
			union(i, j)
			return
		}
		holder[k] = i
	}
	// A one-term question is the same need as every question with its
	// term, whichever came first: find the first one-term question of each
	// term before joining.
	single := map[string]int{}
	for i, q := range qs {
		if len(q.terms) == 1 {
			if _, ok := single[q.terms[0]]; !ok {
				single[q.terms[0]] = i
			}
		}
	}
	for i, q := range qs {
		terms := groupTerms(q)
		for x, t := range terms {
			if j, ok := single[t]; ok {
				union(i, j)
			}
			if q.top != "" {
				join(i, needKey{kind: keyPage, a: t, b: q.top})
			}
			join(i, needKey{kind: keyThread, a: t, b: q.turn.ThreadID})
			for _, u := range terms[x+1:] {
				a, b := t, u
				if b < a {
					a, b = b, a
				}
				join(i, needKey{kind: keyPair, a: a, b: b})
			}
		}
	}
	for i := range parent {
		parent[i] = find(i)
	}
	return parent
}

// groupTerms returns the key terms of q that grouping compares.
func groupTerms(q flagged) []string {
	if len(q.terms) > maxGroupTerms {
		return q.terms[:maxGroupTerms]
	}
	return q.terms
}

func makeGap(qs []flagged, members []int) Gap {
	g := Gap{Questions: []GapQuestion{}}
	terms := map[string]int{}
	surface := map[string]string{}
	pages := map[string]int{}
	// Newest first in the list.
	sort.Slice(members, func(i, j int) bool {
		a, b := qs[members[i]].turn, qs[members[j]].turn
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		if a.ThreadID != b.ThreadID {
			return a.ThreadID < b.ThreadID
		}
		return a.Seq < b.Seq
	})
	for _, m := range members {
		q := qs[m]
		g.Count++
		for _, r := range q.reasons {
			switch r {
			case ReasonNotCovered:
				g.NotCovered++
			case ReasonPartial:
				g.Partial++
			case ReasonLowScore:
				g.LowScore++
			case ReasonDownvoted:
				g.Downvoted++
			}
		}
		if q.turn.CreatedAt.After(g.LastAsked) {
			g.LastAsked = q.turn.CreatedAt
		}
		for _, t := range q.terms {
			terms[t]++
			if _, ok := surface[t]; !ok {
				surface[t] = q.words[t]
			}
		}
		if q.top != "" {
			pages[q.top]++
		}
		if len(g.Questions) < maxGapQuestions {
			g.Questions = append(g.Questions, GapQuestion{
				ThreadID: q.turn.ThreadID, Seq: q.turn.Seq, Question: q.turn.Question,
				Reasons: q.reasons, Comment: q.turn.Comment, AskedAt: q.turn.CreatedAt,
			})
		}
	}
	var label []string
	for _, c := range top(terms, nil) {
		if len(label) == labelTerms {
			break
		}
		label = append(label, c.Value)
		g.Terms = append(g.Terms, surface[c.Value])
	}
	if ps := top(pages, nil); len(ps) > 0 {
		g.TopPage = ps[0].Value
	}
	sort.Strings(label)
	g.Key = strings.Join(label, "+")
	if g.Key == "" {
		g.Key = "untitled"
	}
	return g
}

// DraftPrompt is the agent instruction a gap suggests: the readers'
// questions and what to write. The person starting the job edits it.
func DraftPrompt(g Gap) string {
	var b strings.Builder
	b.WriteString("Readers asked the docs assistant questions the documentation does not answer well")
	if len(g.Terms) > 0 {
		fmt.Fprintf(&b, " (about %s)", strings.Join(g.Terms, ", "))
	}
	b.WriteString(":\n\n")
	seen := map[string]bool{}
	n := 0
	for _, q := range g.Questions {
		text := normalizeSpace(q.Question)
		if text == "" || seen[strings.ToLower(text)] || n == 10 {
			continue
		}
		seen[strings.ToLower(text)] = true
		n++
		fmt.Fprintf(&b, "- %s", text)
		if q.Comment != "" {
			fmt.Fprintf(&b, " (reader's comment: %s)", strings.Join(strings.Fields(q.Comment), " "))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nWrite the documentation that answers them: extend the page where this belongs")
	if g.TopPage != "" {
		fmt.Fprintf(&b, " (the closest today is %s)", g.TopPage)
	}
	b.WriteString(" or add a new page, put any new page in the navigation, and link it from related pages. Keep to what the product really does; do not invent features.")
	return b.String()
}

// normalizeSpace trims s and makes each run of white space one space.
func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// stopWords are left out of key terms: they say nothing about the need.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours can could would should will with without
		how what when where which who whom why does did doing done has have had having this that these those there
		here from into onto over under about after before then than them they their its it's was were been being
		any all some each more most other such only own same just also very too out off our ours ourselves
		is am an a to of in on at by or if as be do so no yes via per use using used get got make made
		need needs want wants way ways there's what's how's i'm can't don't doesn't isn't won't please help thanks thank
		docs doc documentation page pages`) {
		m[w] = true
	}
	return m
}()

// words splits text into lower-case words of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// singular drops a plural ending: a crude stem, enough for "webhooks" and
// "webhook", "retries" and "retry", "indexes" and "index" to meet.
func singular(w string) string {
	switch {
	case len(w) <= 3 || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"):
		return strings.TrimSuffix(w, "es")
	case strings.HasSuffix(w, "s"):
		return strings.TrimSuffix(w, "s")
	}
	return w
}

// KeyTerms returns a question's key terms, each once, in order.
func KeyTerms(question string) []string {
	terms, _ := keyTerms(question)
	return terms
}

// keyTerms returns the key terms and, for each, the word as written (so a
// gap is labelled "kubernetes", not its folded "kubernete").
func keyTerms(question string) ([]string, map[string]string) {
	var out []string
	written := map[string]string{}
	for _, w := range words(question) {
		w = strings.Trim(strings.TrimSuffix(w, "'s"), "'")
		if len([]rune(w)) < 3 || stopWords[w] {
			continue
		}
		term := singular(w)
		if len([]rune(term)) < 3 { // "axes" stays itself rather than "ax"
			term = w
		}
		if _, seen := written[term]; !seen {
			written[term] = w
			out = append(out, term)
		}
	}
	return out, written
}
