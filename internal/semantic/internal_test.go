package semantic

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":          0,
		"3":         3 * time.Second,
		"0.25":      250 * time.Millisecond,
		"-1":        0,
		"999999999": 0, // a day or more is a broken header, not a wait
		"soon":      0,
		now.Add(2 * time.Second).Format(http.TimeFormat): 2 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):    0,
	}
	for in, want := range tests {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestBackoffHonoursRetryAfterWithinTheCap(t *testing.T) {
	t.Parallel()
	p := poster{retryBase: 100 * time.Millisecond, maxRetryWait: time.Second}
	for attempt := 1; attempt < 40; attempt++ {
		if d := p.backoff(attempt, 0); d <= 0 || d > time.Second {
			t.Fatalf("backoff(%d) = %s", attempt, d)
		}
	}
	if d := p.backoff(1, 700*time.Millisecond); d < 700*time.Millisecond {
		t.Errorf("backoff below the asked wait: %s", d)
	}
	if d := p.backoff(1, time.Hour); d != time.Second {
		t.Errorf("backoff above the cap: %s", d)
	}
}

// FuzzParseRerank feeds the reply parser what a broken or hostile server
// could send: it must return scores for every document or an error.
func FuzzParseRerank(f *testing.F) {
	f.Add([]byte(`{"results":[{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":0.1}]}`), 2)
	f.Add([]byte(`{"data":[{"index":0,"relevance_score":2}]}`), 1)
	f.Add([]byte(`[{"index":0,"score":0.9},{"index":2,"score":0.3}]`), 3)
	f.Add([]byte(`[{"index":-1,"score":1e999}]`), 1)
	f.Fuzz(func(t *testing.T, reply []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		scores, err := parseRerank(reply, n)
		if err != nil {
			return
		}
		if len(scores) != n {
			t.Fatalf("%d scores for %d documents", len(scores), n)
		}
		for _, s := range scores {
			if math.IsNaN(s) || math.IsInf(s, 1) {
				t.Fatalf("score %v", s)
			}
		}
	})
}

// FuzzParseEmbeddings does the same for the embeddings reply.
func FuzzParseEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0.1,0.2]},{"index":0,"embedding":[0.3,0.4]}]}`), 2)
	f.Add([]byte(`{"data":[{"embedding":[1e39]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[]}]}`), 1)
	f.Fuzz(func(t *testing.T, reply []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		e := &OpenAIEmbedder{}
		vecs, _, err := e.parse(reply, n)
		if err != nil {
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d texts", len(vecs), n)
		}
		for _, v := range vecs {
			if len(v) != len(vecs[0]) {
				t.Fatal("vectors of different lengths")
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite %v", x)
				}
			}
		}
	})
}

func TestRedactedURLHidesThePassword(t *testing.T) {
	t.Parallel()
	if got := redactedURL("https://user:hunter2-secret@vectors.example/v1/embeddings"); got != "https://user:xxxxx@vectors.example/v1/embeddings" {
		t.Errorf("redactedURL = %q", got)
	}
}
