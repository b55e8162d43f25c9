package tenant

import (
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
)

func TestCheckSynonyms(t *testing.T) {
	t.Parallel()
	many := func(n int, group []string) [][]string {
		out := make([][]string, n)
		for i := range out {
			out[i] = slices.Clone(group)
		}
		return out
	}
	tests := []struct {
		name    string
		groups  [][]string
		wantErr string
	}{
		{"none", nil, ""},
		{"words and phrases", [][]string{{"teamspace", "workspace"}, {"sign in", "log in", "login"}}, ""},
		{"one member", [][]string{{"teamspace"}}, "group 1 has 1 members"},
		{"too many members", many(1, strings.Fields("a1 b1 c1 d1 e1 f1 g1 h1 i1 j1 k1")), "group 1 has 11 members"},
		{"too many groups", many(MaxSynonymGroups+1, []string{"lamp", "lantern"}), "201 groups"},
		{"empty member", [][]string{{"lamp", "   "}}, "member 2 \"\": it is empty"},
		{"long member", [][]string{{"lamp", strings.Repeat("x", 65)}}, "longer than 64 bytes"},
		{"many words", [][]string{{"lamp", "a b c d e f"}}, "more than 5 words"},
		{"control character", [][]string{{"lamp", "lan\x00tern"}}, "control character"},
		{"no word", [][]string{{"lamp", "--"}}, "no letter or digit"},
		{"invalid utf-8", [][]string{{"lamp", "lan\xfftern"}}, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := DomainSettings{Synonyms: tt.groups}
			err := CheckSynonyms(&s)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckSynonyms: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("CheckSynonyms: %v, want an invalid error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseSynonyms(t *testing.T) {
	t.Parallel()
	got, err := ParseSynonyms(" teamspace = workspace ; sign  in=log in=login;")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"teamspace", "workspace"}, {"sign in", "log in", "login"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ParseSynonyms = %q, want %q", got, want)
	}
	if got, err := ParseSynonyms("  "); err != nil || got != nil {
		t.Errorf("ParseSynonyms(blank) = %q, %v; want none", got, err)
	}
	if _, err := ParseSynonyms("teamspace"); err == nil {
		t.Error("ParseSynonyms(one member): no error")
	}
}
