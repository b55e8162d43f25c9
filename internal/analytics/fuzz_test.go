package analytics

import (
	"testing"
	"time"
)

// FuzzDecodeCursor: any cursor string either decodes to a cursor that
// encodes back to one decoding the same, or is refused; never a panic.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(Cursor{CreatedAt: time.Unix(1700000000, 0).UTC(), ID: "thr_1"}.Encode())
	f.Add(Cursor{Offset: 50}.Encode())
	f.Add("")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := DecodeCursor(s)
		if err != nil || c == nil {
			return
		}
		again, err := DecodeCursor(c.Encode())
		if err != nil || !again.CreatedAt.Equal(c.CreatedAt) || again.ID != c.ID || again.Offset != c.Offset || again.Offset < 0 {
			t.Fatalf("%q: %+v re-decodes as %+v, %v", s, c, again, err)
		}
	})
}

// FuzzParseRange: a range is refused or ordered.
func FuzzParseRange(f *testing.F) {
	f.Add("2026-03-01", "2026-03-01")
	f.Add("2026-03-01T10:00:00Z", "")
	f.Add("", "2026-02-30")
	f.Fuzz(func(t *testing.T, from, to string) {
		r, err := ParseRange(from, to)
		if err == nil && !r.From.IsZero() && !r.To.IsZero() && !r.To.After(r.From) {
			t.Fatalf("ParseRange(%q, %q) = %+v", from, to, r)
		}
	})
}

// FuzzKeyTerms: terms are never empty, short or repeated.
func FuzzKeyTerms(f *testing.F) {
	f.Add("How do I rotate webhook secrets?")
	f.Add("What's the API's rate-limit? ''s 's")
	f.Add("axes ties")
	f.Fuzz(func(t *testing.T, q string) {
		seen := map[string]bool{}
		for _, term := range KeyTerms(q) {
			if len([]rune(term)) < 3 || seen[term] {
				t.Fatalf("KeyTerms(%q) has %q", q, term)
			}
			seen[term] = true
		}
	})
}
