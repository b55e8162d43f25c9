package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// termStrings writes terms compactly: words joined by spaces, "*" for a
// prefix, "+" in front of a required term.
func termStrings(ts []Term) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return strings.Join(out, " | ")
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, lang, want string
	}{
		{"stop words and neighbours", "How do I change the sidebar colour?", "en",
			"change | sidebar | sidebar colour | colour"},
		{"punctuation breaks neighbours", "tables, migrations.", "en", "tables | migrations"},
		{"compound", "Where is CLAUDE.md read?", "en", "claude md | claude | md | md read | read"},
		{"path compound", "data/prices.json 404", "en", "data prices json | data | prices | json | json 404* | 404*"},
		{"env var", "MY_ENV_VAR", "en", "my env var | env | var*"},
		{"camel case", "randomUUID helper", "en", "randomuuid | random | uuid | randomuuid helper* | helper*"},
		{"apostrophes", "Why can't I see Pezzo's logs?", "en", "see | see pezzo | pezzo | logs"},
		{"french elision", "Comment activer l'analytique ?", "fr", "activer | analytique"},
		{"spanish stop words", "¿Cómo oculto una página?", "es", "oculto | página"},
		{"quoted phrase is required", `install "mint dev" locally`, "en", "install | +mint dev | locally*"},
		{"unbalanced quote", `the "sidebar`, "en", "sidebar*"},
		{"typing prefix", "custom dom", "en", "custom | custom dom* | dom*"},
		{"short last word no prefix", "api v1 ab", "en", "api | api v1 | v1 | v1 ab | ab"},
		{"cjk bigrams", "如何隐藏页面？", "zh", "如何 | 何隐 | 隐藏 | 藏页 | 页面"},
		{"cjk mixed", "hidden: true 是什么", "zh", "hidden | true | 是什 | 什么"},
		{"only stop words", "how do I do it?", "en", ""},
		{"empty", "", "en", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := termStrings(ParseQuery(tt.in, tt.lang)); got != tt.want {
				t.Errorf("ParseQuery(%q) =\n  %s\nwant\n  %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseQueryBoundsTerms(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon ", 20)
	for i := range 100 {
		long += " word" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if n := len(ParseQuery(long, "en")); n > MaxTerms {
		t.Errorf("ParseQuery of a long text gave %d terms, want at most %d", n, MaxTerms)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"How do I set up SSO?", `"exact phrase" rest`, "侧边栏 hidden: true", "l'API d'Analytics", `""""`, "a.b.c/d_e-f", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := ParseQuery(s, DetectLanguage(s))
		if len(terms) > MaxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if len(term.Words) == 0 {
				t.Fatalf("term without words in %q", s)
			}
			for _, w := range term.Words {
				if w == "" || !utf8.ValidString(w) && utf8.ValidString(s) {
					t.Fatalf("bad word %q in %q", w, s)
				}
			}
		}
	})
}

// FuzzUpperAfterFirst: a word without an upper-case letter after its first
// rune is one camel-case part, so ParseQuery may skip camelParts for it.
func FuzzUpperAfterFirst(f *testing.F) {
	for _, w := range []string{"JUnit", "iPhone", "getHTTPResponse", "plain", "Élan", "éTÉ", "x", "", "\xffA"} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if !upperAfterFirst(w) {
			if parts := camelParts(w); len(parts) != 1 {
				t.Fatalf("camelParts(%q) = %q, but upperAfterFirst is false", w, parts)
			}
		}
	})
}
