package analytics

import (
	"bufio"
	"io"
	"strings"
)

// WriteCSV writes rows as CSV (RFC 4180 quoting, "\n" line ends). Questions,
// answers and comments come from anyone, so a cell that a spreadsheet could
// run as a formula is defused: see formulaRisk. A bufio.Writer keeps its
// first error and Flush returns it, so the writes before it are not checked
// one by one.
func WriteCSV(w io.Writer, rows [][]string) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		for i, cell := range r {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			writeCell(bw, cell)
		}
		_ = bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writeCell writes one cell. A risky cell gets a leading single quote, which
// spreadsheets show as text, and is always quoted so that the quote stays
// part of the cell whatever separator the spreadsheet splits on.
func writeCell(bw *bufio.Writer, cell string) {
	risky := formulaRisk(cell)
	if risky {
		cell = "'" + cell
	}
	if !risky && !needsQuotes(cell) {
		_, _ = bw.WriteString(cell)
		return
	}
	_ = bw.WriteByte('"')
	_, _ = bw.WriteString(strings.ReplaceAll(cell, `"`, `""`))
	_ = bw.WriteByte('"')
}

// formulaStarts are the characters that make a spreadsheet read a cell, or
// a piece of one after a separator, as a formula.
const formulaStarts = "=+-@\t\r"

// cellSeparators are the characters a spreadsheet may split a cell on when
// it guesses the file's delimiter or the reader pastes a cell elsewhere.
const cellSeparators = ",;\t|\n\r"

// formulaRisk reports whether the cell, or any piece of it after a separator
// (spaces skipped), starts like a formula. No column is exempt: the numbers
// we export (counts, sequence numbers, scores) are never negative, so
// defusing "-" everywhere costs nothing and needs no list of numeric columns.
func formulaRisk(cell string) bool {
	atStart := true
	for i := 0; i < len(cell); i++ {
		c := cell[i]
		if atStart {
			if c == ' ' {
				continue
			}
			if strings.IndexByte(formulaStarts, c) >= 0 {
				return true
			}
		}
		atStart = strings.IndexByte(cellSeparators, c) >= 0
	}
	return false
}

// needsQuotes follows encoding/csv: quote a cell holding the delimiter, a
// quote or a line break, or starting with a space.
func needsQuotes(cell string) bool {
	return cell != "" && (strings.ContainsAny(cell, ",\"\r\n") || cell[0] == ' ' || cell[0] == '\t')
}
