package assistant

import (
	"reflect"
	"strings"
	"testing"
)

func filterAll(n int, deltas ...string) (string, *citeFilter) {
	var b strings.Builder
	f := newCiteFilter(n, func(s string) error { b.WriteString(s); return nil })
	for _, d := range deltas {
		_ = f.Write(d)
	}
	_ = f.Close()
	return b.String(), f
}

func TestCiteFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		n       int
		in      string
		want    string
		dropped int
	}{
		{name: "valid markers stay", n: 3, in: "Run it [1]. Then this [2][3].", want: "Run it [1]. Then this [2][3]."},
		{name: "marker past the passages goes with its space", n: 2, in: "Run it [7]. Done [1].", want: "Run it. Done [1].", dropped: 1},
		{name: "zero is no passage", n: 2, in: "See [0] here", want: "See here", dropped: 1},
		{name: "list keeps the valid numbers", n: 3, in: "Both [1, 9, 3].", want: "Both [1, 3].", dropped: 1},
		{name: "footnote style", n: 1, in: "Yes[^1] and no[^4].", want: "Yes[^1] and no.", dropped: 1},
		{name: "footnote style list", n: 2, in: "x [^2,5]", want: "x [^2]", dropped: 1},
		{name: "not a marker", n: 1, in: "a [x] b [1a] c [] d [ ] e", want: "a [x] b [1a] c [] d [ ] e"},
		{name: "markdown link", n: 1, in: "[guide](https://x/y) [1]", want: "[guide](https://x/y) [1]"},
		{name: "inline code untouched", n: 1, in: "use `arr[5]` [1] and `` a[9] `` [3]", want: "use `arr[5]` [1] and `` a[9] ``", dropped: 1},
		{name: "fenced code untouched", n: 1, in: "```js\nx[4] = 1\n```\nok [4]", want: "```js\nx[4] = 1\n```\nok", dropped: 1},
		{name: "spaces kept elsewhere", n: 1, in: "a  b   [1]  c ", want: "a  b   [1]  c "},
		{name: "unclosed bracket released", n: 1, in: "tail [12", want: "tail [12"},
		{name: "very long bracket released", n: 1, in: "[" + strings.Repeat("1", 40) + "]", want: "[" + strings.Repeat("1", 40) + "]"},
		{name: "newline ends a marker", n: 1, in: "[1\n]", want: "[1\n]"},
		{name: "unicode", n: 1, in: "é [2] 中文 [1]", want: "é 中文 [1]", dropped: 1},
		{name: "no passages strips all", n: 0, in: "Earlier answer [1][2].", want: "Earlier answer.", dropped: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, f := filterAll(tc.n, tc.in)
			if got != tc.want {
				t.Fatalf("filter(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if f.dropped != tc.dropped {
				t.Errorf("dropped %d numbers, want %d", f.dropped, tc.dropped)
			}
			// The same text split anywhere (a model streams in arbitrary
			// pieces) gives the same result.
			for i := 1; i < len(tc.in); i++ {
				if got, _ := filterAll(tc.n, tc.in[:i], tc.in[i:]); got != tc.want {
					t.Fatalf("split at %d: %q, want %q", i, got, tc.want)
				}
			}
			// And so does one rune at a time.
			var runes []string
			for _, r := range tc.in {
				runes = append(runes, string(r))
			}
			if got, _ := filterAll(tc.n, runes...); got != tc.want {
				t.Fatalf("rune by rune: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCiteFilterEmitsPerDelta: what each delta lets through is one text
// delta on the wire, so the pieces, not only their sum, must stay the same.
func TestCiteFilterEmitsPerDelta(t *testing.T) {
	t.Parallel()
	deltas := []string{"Per ", "the ", "docs [", "1] ", "and", "  [9]", ". Use", " `x[2]` ", "now\xe4", "\xb8\xad [", "^2, 7]", " é ", "[link](u)", " end  "}
	want := [][]string{{"Per"}, {" the"}, {" docs"}, {" [1]"}, {" and"}, nil, {". Use"}, {" `x[2]`"}, {" now"}, {"中"}, {" [^2]"}, {" é"}, {" [link](u)"}, {" end"}}
	var got [][]string
	var pieces []string
	f := newCiteFilter(2, func(s string) error { pieces = append(pieces, s); return nil })
	for _, d := range deltas {
		pieces = nil
		if err := f.Write(d); err != nil {
			t.Fatal(err)
		}
		got = append(got, pieces)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pieces per delta:\n%q\nwant\n%q", got, want)
	}
	pieces = nil
	if err := f.Close(); err != nil || !reflect.DeepEqual(pieces, []string{"  "}) {
		t.Errorf("Close emitted %q, %v; want the two spaces held", pieces, err)
	}
}

func TestStripMarkers(t *testing.T) {
	t.Parallel()
	if got := stripMarkers("Run `tern sync` [1]. It watches [2, 3]."); got != "Run `tern sync`. It watches." {
		t.Fatalf("stripMarkers = %q", got)
	}
}

func TestCiteURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ site, path, anchor, want string }{
		{"https://docs.example.com", "guides/sync", "exclude-files", "https://docs.example.com/guides/sync#exclude-files"},
		{"https://docs.example.com/", "guides/sync", "", "https://docs.example.com/guides/sync"},
		{"https://docs.example.com/v2", "index", "", "https://docs.example.com/v2/"},
		{"https://docs.example.com", "guides/index", "intro", "https://docs.example.com/guides#intro"},
		{"", "guides/sync", "", "/guides/sync"},
		{"", "index", "", "/"},
	}
	for _, tc := range tests {
		if got := citeURL(tc.site, tc.path, tc.anchor); got != tc.want {
			t.Errorf("citeURL(%q, %q, %q) = %q, want %q", tc.site, tc.path, tc.anchor, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip short = %q", got)
	}
	if got := clip("line one\nline two\nline three", 20); got != "line one\nline two\n…" {
		t.Errorf("clip at a line = %q", got)
	}
	if got := clip("ééééé", 5); got != "éé…" {
		t.Errorf("clip in a rune = %q", got)
	}
}
