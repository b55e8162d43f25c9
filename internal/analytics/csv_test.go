package analytics

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteCSVDefusesFormulas: a cell that starts like a spreadsheet
// formula, or has a formula after any separator a spreadsheet may split on,
// is written as quoted text behind a single quote; other cells unchanged.
func TestWriteCSVDefusesFormulas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cell, want string
	}{
		{"formula at start", `=HYPERLINK("http://x")`, `"'=HYPERLINK(""http://x"")"`},
		{"plus at start", "+1", `"'+1"`},
		{"negative number", "-2", `"'-2"`},
		{"at sign at start", "@me", `"'@me"`},
		{"tab at start", "\tx", "\"'\tx\""},
		{"carriage return at start", "\rx", "\"'\rx\""},
		{"after semicolon", "x;=1+1", `"'x;=1+1"`},
		{"after comma", "a,@SUM(1)", `"'a,@SUM(1)"`},
		{"after tab", "foo\t=cmd", "\"'foo\t=cmd\""},
		{"after pipe", "a|+1", `"'a|+1"`},
		{"after newline", "line one\n-cmd", "\"'line one\n-cmd\""},
		{"after carriage return", "one\r=2", "\"'one\r=2\""},
		{"after separator and spaces", "x;  =1", `"'x;  =1"`},
		{"leading spaces", "  =1", `"'  =1"`},
		{"plain", "How do I rotate keys?", "How do I rotate keys?"},
		{"plain with comma", "plain, with comma", `"plain, with comma"`},
		{"hyphen inside a word", "rate-limit", "rate-limit"},
		{"sign after a space", "a - b + c = d", "a - b + c = d"},
		{"email", "me@example.com", "me@example.com"},
		{"quote inside", `say "hi"`, `"say ""hi"""`},
		{"empty", "", ""},
		{"count", "42", "42"},
		{"page paths", "guides/a api/b", "guides/a api/b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := WriteCSV(&b, [][]string{{tt.cell}}); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(b.String(), "\n"); got != tt.want {
				t.Fatalf("WriteCSV(%q) = %q, want %q", tt.cell, got, tt.want)
			}
		})
	}
}

// TestWriteCSVRows: rows keep their shape, and the caller's rows are not
// changed.
func TestWriteCSVRows(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	rows := [][]string{{"question", "pages"}, {`=HYPERLINK("http://x")`, "guides/a"}, {"+1", "-2"}, {"@me", "plain, with comma"}}
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "question,pages\n\"'=HYPERLINK(\"\"http://x\"\")\",guides/a\n\"'+1\",\"'-2\"\n\"'@me\",\"plain, with comma\"\n"
	if b.String() != want {
		t.Fatalf("csv =\n%s\nwant\n%s", b.String(), want)
	}
	if rows[1][0] != `=HYPERLINK("http://x")` {
		t.Error("WriteCSV changed its caller's rows")
	}
}
