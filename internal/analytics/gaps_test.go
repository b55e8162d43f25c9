package analytics

import (
	"reflect"
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
