package assistant

import "testing"

func TestModelStatus(t *testing.T) {
	t.Parallel()
	partialGopherFinger := verdict{status: TurnPartial, byName: true, missing: []string{"Gopher", "Finger"}, note: "The docs don't mention Gopher or Finger. Here is what they say about the rest of your question."}
	for _, tc := range []struct {
		name         string
		st           groundingStats
		names        verdict
		status, note string
	}{
		{"backed claims", groundingStats{claims: 2, supported: 2, supportedCited: 2}, verdict{}, TurnAnswered, ""},
		{"unsupported claims are still an answer", groundingStats{claims: 2, supported: 0}, verdict{}, TurnAnswered, ""},
		{"declined", groundingStats{declines: []string{"The documentation does **not** cover this."}}, verdict{},
			TurnNotCovered, "The documentation does not cover this."},
		{"declined beside unbacked claims", groundingStats{claims: 1, declines: []string{declineSentence}}, verdict{},
			TurnNotCovered, declineSentence},
		{"declined a part", groundingStats{claims: 1, supported: 1, supportedCited: 1, declines: []string{"The documentation does not cover Gopher."}},
			verdict{}, TurnPartial, "The documentation does not cover Gopher."},
		{"strict left out everything", groundingStats{claims: 2, left: 2}, verdict{}, TurnNotCovered, strictNothingText},
		{"names the docs lack", groundingStats{claims: 1, supported: 1, supportedCited: 1}, partialGopherFinger,
			TurnPartial, "The docs don't mention Gopher or Finger."},
		{"names the docs lack and nothing else", groundingStats{claims: 1, supported: 1, supportedCited: 1},
			verdict{status: TurnNotCovered, byName: true, missing: []string{"Gopher"}, note: "The docs don't mention Gopher."},
			TurnNotCovered, "The docs don't mention Gopher."},
		{"words the docs lack are the model's to judge", groundingStats{claims: 1, supported: 1, supportedCited: 1},
			verdict{status: TurnNotCovered, missing: []string{"teleport"}, note: "The docs don't mention teleport."}, TurnAnswered, ""},
		{"a decline wins over names", groundingStats{declines: []string{declineSentence}}, partialGopherFinger, TurnNotCovered, declineSentence},
		{"a partial decline wins over names", groundingStats{claims: 1, supported: 1, supportedCited: 1, declines: []string{declineSentence}},
			partialGopherFinger, TurnPartial, declineSentence},
	} {
		if status, note := modelStatus(tc.st, tc.names); status != tc.status || note != tc.note {
			t.Errorf("%s: modelStatus = %q, %q; want %q, %q", tc.name, status, note, tc.status, tc.note)
		}
	}
}
