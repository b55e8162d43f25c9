package analytics

import (
	"bytes"
	"encoding/csv"
	"strings"
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

// FuzzWriteCSV: the output is valid CSV with the same rows; every cell reads
// back either unchanged or, when it could start a formula anywhere a
// spreadsheet may split it, behind a single quote.
func FuzzWriteCSV(f *testing.F) {
	f.Add("x;=1+1", "plain")
	f.Add("a,@SUM(1)", "foo\t=cmd")
	f.Add("\"quoted\"\r\n-2", " lead")
	f.Fuzz(func(t *testing.T, a, b string) {
		var out bytes.Buffer
		if err := WriteCSV(&out, [][]string{{a, b}, {b, a}}); err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(&out)
		got, err := r.ReadAll()
		if err != nil {
			t.Fatalf("WriteCSV(%q, %q) wrote invalid CSV %q: %v", a, b, out.String(), err)
		}
		if len(got) != 2 {
			t.Fatalf("WriteCSV(%q, %q) read back as %d rows", a, b, len(got))
		}
		for i, in := range []string{a, b} {
			want := in
			if formulaRisk(in) {
				want = "'" + in
			}
			// encoding/csv reads "\r\n" inside a quoted field as "\n".
			want = strings.ReplaceAll(want, "\r\n", "\n")
			if got[0][i] != want {
				t.Fatalf("cell %q read back as %q, want %q", in, got[0][i], want)
			}
		}
	})
}
