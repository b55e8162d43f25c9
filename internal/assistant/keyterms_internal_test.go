package assistant

import (
	"strings"
	"testing"
)

// appendLower must write what strings.ToLower returns, whatever the text:
// onTopic finds the question's terms in one and excerpt in the other.
var lowerCases = []string{
	"",
	"plain ascii, nothing to change",
	"Mixed CASE with Digits 42 and PUNCTUATION!",
	"Größe › Überblick",
	"KELVIN \u212A and DOTTED \u0130stanbul",
	"invalid \xff byte and a cut rune \xe2\x82",
	"a genuine \uFFFD replacement",
	"ΣΊΣΥΦΟΣ and 日本語",
}

func TestAppendLower(t *testing.T) {
	t.Parallel()
	for _, s := range lowerCases {
		if got, want := string(appendLower([]byte("kept "), s)), "kept "+strings.ToLower(s); got != want {
			t.Errorf("appendLower(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzAppendLower(f *testing.F) {
	for _, s := range lowerCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendLower(nil, s)), strings.ToLower(s); got != want {
			t.Errorf("appendLower(%q) = %q, want %q", s, got, want)
		}
	})
}
