package analytics

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
)

func TestKeyTerms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{"How do I rotate webhook secrets?", []string{"rotate", "webhook", "secret"}},
		{"What's the API's rate-limit?", []string{"api", "rate", "limit"}},
		{"Is there SSO, SSO and more SSO", []string{"sso"}},
		{"how do i", nil},
		{"Access classes, retries, caches, status", []string{"access", "class", "retry", "cache", "status"}},
	}
	for _, c := range cases {
		if got := KeyTerms(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("KeyTerms(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func turn(q, status string, score float64, page, rating string, at time.Time) TurnRecord {
	t := TurnRecord{ThreadID: "thr_" + q, Seq: 1, Question: q, Status: status, Rating: rating, CreatedAt: at}
	if page != "" {
		t.Sources = []assistant.TurnSource{{Path: page, Score: score}}
	}
	return t
}

func TestGroupGaps(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	nc, ok := assistant.TurnNotCovered, assistant.TurnAnswered
	cases := []struct {
		name  string
		turns []TurnRecord
		want  []string // key:count:reasons
	}{
		{
			name: "answered well and unrated is no gap",
			turns: []TurnRecord{
				turn("install on linux", ok, 0.9, "install", "", t0),
				turn("install on mac", ok, 0.8, "install", RatingUp, t0),
			},
			want: []string{},
		},
		{
			name: "two shared terms group, different words",
			turns: []TurnRecord{
				turn("rotate webhook secrets", nc, 0, "", "", t0),
				turn("webhook secret rotation", nc, 0, "", "", t0.Add(time.Minute)),
				turn("terraform provider", nc, 0, "", "", t0),
			},
			want: []string{"rotate+secret+webhook:2", "provider+terraform:1"},
		},
		{
			name: "one shared term and the same top page group; without the page they do not",
			turns: []TurnRecord{
				turn("configure SAML login", ok, 0.1, "auth/sso", "", t0),
				turn("okta login broken", ok, 0.9, "auth/sso", RatingDown, t0),
				turn("login with github", ok, 0.2, "auth/oauth", "", t0),
			},
			want: []string{"broken+configure+login:2", "github+login:1"},
		},
		{
			name: "a one-term question joins a group that has its term, transitively",
			turns: []TurnRecord{
				turn("pagination?", nc, 0, "", "", t0),
				turn("pagination cursor format", nc, 0, "", "", t0),
				turn("cursor format for lists", nc, 0, "", "", t0),
			},
			want: []string{"cursor+format+pagination:3"},
		},
		{
			name:  "only stop words: a gap of its own, untitled",
			turns: []TurnRecord{turn("how do I?", nc, 0, "", "", t0)},
			want:  []string{"untitled:1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := []string{}
			for _, g := range groupGaps(c.turns, DefaultLowScore) {
				got = append(got, g.Key+":"+itoa(g.Count))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("gaps = %v, want %v", got, c.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDraftPrompt(t *testing.T) {
	t.Parallel()
	g := Gap{Terms: []string{"webhook", "secret"}, TopPage: "webhooks", Questions: []GapQuestion{
		{Question: "How do I rotate webhook secrets?", Comment: "nothing on rotation"},
		{Question: "how do I rotate   webhook secrets?"},
		{Question: "Webhook secret rotation"},
	}}
	p := DraftPrompt(g)
	for _, want := range []string{"(about webhook, secret)", "- How do I rotate webhook secrets? (reader's comment: nothing on rotation)\n", "- Webhook secret rotation\n", "closest today is webhooks"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Count(p, "rotate") != 1 {
		t.Errorf("a question asked twice is listed twice:\n%s", p)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := Cursor{CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), ID: "thr_1", Offset: 3}
	got, err := DecodeCursor(c.Encode())
	if err != nil || !got.CreatedAt.Equal(c.CreatedAt) || got.ID != c.ID || got.Offset != 3 {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for _, bad := range []string{"!!", "e30x", "eyJvIjotMX0"} {
		if _, err := DecodeCursor(bad); err == nil {
			t.Errorf("DecodeCursor(%q) accepted", bad)
		}
	}
	if c, err := DecodeCursor(""); c != nil || err != nil {
		t.Errorf("empty cursor = %v, %v", c, err)
	}
}

// gapTurns returns n flagged questions drawn from a small vocabulary, so
// that common terms are shared by many of them, and (one word in two when
// rare > 0) from rare words, over a few pages and conversations, one
// minute apart, oldest first.
func gapTurns(n int, seed uint64, rare int) []TurnRecord {
	vocab := []string{"webhook", "secret", "rotate", "login", "okta", "saml", "terraform", "provider",
		"cursor", "pagination", "retry", "timeout", "deploy", "preview", "domain", "billing",
		"invoice", "export", "import", "search", "index", "token", "scope", "audit"}
	pages := []string{"", "auth/sso", "api/webhooks", "deploy/previews", "billing"}
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	turns := make([]TurnRecord, 0, n)
	for i := range n {
		k := 1 + rnd.IntN(4)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = vocab[rnd.IntN(len(vocab))]
			if rare > 0 && rnd.IntN(2) == 0 {
				ws[j] = "topic" + strconv.Itoa(rnd.IntN(rare))
			}
		}
		t := TurnRecord{
			ThreadID:  "thr_" + strconv.Itoa(rnd.IntN(n/3+1)),
			Seq:       i + 1,
			Question:  "how do I " + strings.Join(ws, " ") + "?",
			Status:    assistant.TurnNotCovered,
			CreatedAt: t0.Add(time.Duration(i) * time.Minute),
		}
		if p := pages[rnd.IntN(len(pages))]; p != "" {
			t.Status = assistant.TurnAnswered
			t.Sources = []assistant.TurnSource{{Path: p, Score: 0.1}}
		}
		turns = append(turns, t)
	}
	return turns
}

// pairwiseNeeds is the grouping rule applied to every pair of questions:
// the reference the keyed grouping must agree with.
func pairwiseNeeds(qs []flagged) []int {
	parent := make([]int, len(qs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for i, a := range qs {
		for j := range i {
			b := qs[j]
			shared := 0
			for _, t := range a.terms {
				if slices.Contains(b.terms, t) {
					shared++
				}
			}
			same := shared >= 2 ||
				shared == 1 && a.top != "" && a.top == b.top ||
				shared == 1 && a.turn.ThreadID == b.turn.ThreadID ||
				shared == 1 && (len(a.terms) == 1 || len(b.terms) == 1)
			if same {
				parent[find(i)] = find(j)
			}
		}
	}
	return parent
}

// partition names each question's group by its first member.
func partition(parent []int) []int {
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	first := map[int]int{}
	out := make([]int, len(parent))
	for i := range parent {
		r := find(i)
		if _, ok := first[r]; !ok {
			first[r] = i
		}
		out[i] = first[r]
	}
	return out
}

func flaggedOf(turns []TurnRecord) []flagged {
	qs := make([]flagged, 0, len(turns))
	for _, t := range turns {
		terms, surface := keyTerms(t.Question)
		qs = append(qs, flagged{turn: t, reasons: reasonsFor(t, DefaultLowScore), terms: terms, words: surface, top: t.TopPage()})
	}
	return qs
}

func TestJoinSameNeedsMatchesPairwiseRule(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		for _, c := range []struct{ n, rare int }{{2, 0}, {30, 0}, {300, 0}, {300, 400}, {600, 2000}} {
			n := c.n
			qs := flaggedOf(gapTurns(n, seed, c.rare))
			got, want := partition(joinSameNeeds(qs)), partition(pairwiseNeeds(qs))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %d questions: groups %v, pairwise rule %v", seed, n, got, want)
			}
		}
	}
}

func TestGroupGapsKeepsTheNewestQuestions(t *testing.T) {
	t.Parallel()
	turns := gapTurns(2*MaxGapQuestions, 1, 0)
	gaps := groupGaps(turns, DefaultLowScore)
	total := 0
	oldest := time.Time{}
	for _, g := range gaps {
		total += g.Count
		for _, q := range g.Questions {
			if oldest.IsZero() || q.AskedAt.Before(oldest) {
				oldest = q.AskedAt
			}
		}
	}
	if total != MaxGapQuestions {
		t.Errorf("grouped %d questions, want the newest %d", total, MaxGapQuestions)
	}
	if cut := turns[len(turns)-MaxGapQuestions].CreatedAt; oldest.Before(cut) {
		t.Errorf("a gap lists a question asked %s, before the newest %d (from %s)", oldest, MaxGapQuestions, cut)
	}
	// The newest questions group as they would alone.
	alone := groupGaps(turns[len(turns)-MaxGapQuestions:], DefaultLowScore)
	if len(alone) != len(gaps) {
		t.Errorf("%d gaps, %d when grouping only the newest", len(gaps), len(alone))
	}
}

func TestGroupGapsLongQuestion(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "term%d ", i)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	turns := []TurnRecord{
		turn(b.String(), assistant.TurnNotCovered, 0, "", "", t0),
		turn("term0 term1 setup", assistant.TurnNotCovered, 0, "", "", t0),
	}
	gaps := groupGaps(turns, DefaultLowScore)
	if len(gaps) != 1 || gaps[0].Count != 2 {
		t.Errorf("gaps = %+v, want the two questions as one need", gaps)
	}
}

// BenchmarkGroupGaps groups 20,000 flagged questions that share common
// terms (of which the newest MaxGapQuestions are grouped).
func BenchmarkGroupGaps(b *testing.B) {
	turns := gapTurns(20_000, 1, 0)
	b.ReportAllocs()
	for b.Loop() {
		groupGaps(turns, DefaultLowScore)
	}
}
