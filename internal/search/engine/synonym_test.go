package engine

import (
	"strings"
	"testing"
)

// expansionStrings writes the terms synonyms add to a question: words
// joined by spaces, and the weight when it is not synonymWeight.
func expansionStrings(question string, tables ...*SynonymTable) string {
	terms := ParseQuery(question, "en")
	n := len(terms)
	var out []string
	for _, t := range ExpandSynonyms(question, terms, tables...)[n:] {
		s := strings.Join(t.Words, " ")
		if t.Weight != synonymWeight {
			s += "?"
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

func TestExpandSynonyms(t *testing.T) {
	t.Parallel()
	own := CompileSynonyms([][]string{{"teamspace", "workspace"}, {"lantern", "  ", "lamp"}, {"alone"}})
	tests := []struct{ name, question, want string }{
		{"a word adds its group", "how do I install the agent?", "set up | setup"},
		{"an inflected word", "installing the agent", "set up | setup"},
		{"a phrase adds its group", "where do I log in", "sign in | login | signin | log on"},
		{"a phrase written joined", "login fails", "sign in | log in | signin | log on"},
		{"a hyphenated phrase", "self-hosted setup", "on premises | on prem | own server | install | set up"},
		{"a long phrase", "can I create an account with email", "sign up | signup | register | registration"},
		{"spellings", "change the colour", "color"},
		{"nothing to add", "rotate the thumbnails", ""},
		// A word that only shares a stem with a member is not it.
		{"stem shared with a longer word", "set the name", ""},
		{"custom is not customize", "custom fields", ""},
		{"both members typed", "install or set up", "setup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := expansionStrings(tt.question, BuiltinSynonyms()); got != tt.want {
				t.Errorf("%q: added %q, want %q", tt.question, got, tt.want)
			}
		})
	}
	t.Run("a domain's own table", func(t *testing.T) {
		t.Parallel()
		if got, want := expansionStrings("share a teamspace", BuiltinSynonyms(), own), "workspace"; got != want {
			t.Errorf("added %q, want %q", got, want)
		}
		if got, want := expansionStrings("which lamp", own), "lantern"; got != want {
			t.Errorf("added %q, want %q (an empty member is skipped)", got, want)
		}
		if own.Len() != 2 {
			t.Errorf("own table has %d groups, want 2 (a group of one is skipped)", own.Len())
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		var groups [][]string
		for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike") {
			groups = append(groups, []string{w, w + "x", w + "y"})
		}
		got := expansionStrings("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike", CompileSynonyms(groups))
		if n := len(strings.Split(got, " | ")); n != maxSynonymTerms {
			t.Errorf("added %d terms, want %d", n, maxSynonymTerms)
		}
	})
}

func TestSynonymsKeepScoreNormalization(t *testing.T) {
	t.Parallel()
	di := Build(lanternDocs(), 1)
	terms := ParseQuery("importer options", "en")
	plain := di.Search(Query{Terms: terms, Limit: 1})
	// A synonym that matches nothing changes no score: the normalizer
	// counts the reader's words only.
	expanded := append(terms[:len(terms):len(terms)], Term{Words: []string{"zeppelin"}, Weight: synonymWeight})
	got := di.Search(Query{Terms: expanded, Limit: 1})
	if len(plain) == 0 || len(got) == 0 || plain[0].Score != got[0].Score {
		t.Errorf("scores %v and %v, want the same", scoredPaths(plain), scoredPaths(got))
	}
}
