package analytics

import (
	"bytes"
	"testing"
)

// TestWriteCSVDefusesFormulas: a reader's question that starts like a
// spreadsheet formula is written as text, and ordinary cells unchanged.
func TestWriteCSVDefusesFormulas(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	rows := [][]string{{"question", "pages"}, {`=HYPERLINK("http://x")`, "guides/a"}, {"+1", "-2"}, {"@me", "plain, with comma"}}
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "question,pages\n\"'=HYPERLINK(\"\"http://x\"\")\",guides/a\n'+1,'-2\n'@me,\"plain, with comma\"\n"
	if b.String() != want {
		t.Fatalf("csv =\n%s\nwant\n%s", b.String(), want)
	}
	if rows[1][0] != `=HYPERLINK("http://x")` {
		t.Error("WriteCSV changed its caller's rows")
	}
}
