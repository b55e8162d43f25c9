package analytics

import (
	"encoding/csv"
	"io"
	"strings"
)

// WriteCSV writes rows as CSV. A cell that a spreadsheet would run as a
// formula gets a leading quote: questions and comments come from anyone.
func WriteCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	for _, r := range rows {
		safe := make([]string, len(r))
		for i, cell := range r {
			safe[i] = csvSafe(cell)
		}
		if err := cw.Write(safe); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe defuses a cell that starts like a spreadsheet formula.
func csvSafe(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}
