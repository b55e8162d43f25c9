package assistant

import "testing"

func TestModelStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		st           groundingStats
		missing      []string
		status, note string
	}{
		{"backed claims", groundingStats{claims: 2, supported: 2, supportedCited: 2}, nil, TurnAnswered, ""},
		{"unsupported claims are still an answer", groundingStats{claims: 2, supported: 0}, nil, TurnAnswered, ""},
		{"declined", groundingStats{declines: []string{"The documentation does **not** cover this."}}, nil,
			TurnNotCovered, "The documentation does not cover this."},
		{"declined beside unbacked claims", groundingStats{claims: 1, declines: []string{declineSentence}}, nil,
			TurnNotCovered, declineSentence},
		{"declined a part", groundingStats{claims: 1, supported: 1, supportedCited: 1, declines: []string{"The documentation does not cover Gopher."}},
			nil, TurnPartial, "The documentation does not cover Gopher."},
		{"strict left out everything", groundingStats{claims: 2, left: 2}, nil, TurnNotCovered, strictNothingText},
		{"names the docs lack", groundingStats{claims: 1, supported: 1, supportedCited: 1}, []string{"Gopher", "Finger"},
			TurnPartial, "The docs don't mention Gopher or Finger."},
		{"a decline wins over names", groundingStats{declines: []string{declineSentence}}, []string{"Gopher"}, TurnNotCovered, declineSentence},
	} {
		if status, note := modelStatus(tc.st, tc.missing); status != tc.status || note != tc.note {
			t.Errorf("%s: modelStatus = %q, %q; want %q, %q", tc.name, status, note, tc.status, tc.note)
		}
	}
}
