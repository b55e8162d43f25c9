package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// analyzeReference is Analyze as first written, building the analyzed
// string rune by rune: analyzedTokens must give the tokens of its result.
func analyzeReference(text string) string {
	if isPlainASCII(text) && !hasCamel(text) {
		return text
	}
	var b strings.Builder
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			j := i
			var run []rune
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r2) {
					break
				}
				run = append(run, r2)
				j += s2
			}
			b.WriteByte(' ')
			if len(run) == 1 {
				b.WriteRune(run[0])
			}
			for k := 0; k+1 < len(run); k++ {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteRune(run[k])
				b.WriteRune(run[k+1])
			}
			b.WriteByte(' ')
			i = j
		case isWordRune(r):
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isWordRune(r2) || isCJK(r2) {
					break
				}
				j += s2
			}
			word := text[i:j]
			b.WriteString(word)
			if parts := camelParts(word); len(parts) > 1 {
				for _, p := range parts {
					b.WriteByte(' ')
					b.WriteString(p)
				}
			}
			i = j
		default:
			b.WriteString(text[i : i+size])
			i += size
		}
	}
	return b.String()
}

var tokenizeSeeds = []string{
	"plain text stays", "use $randomUUID here", "HTTPServer and getID2", "JUnit and iPhone",
	"侧边栏导航", "页", "hidden: true 在侧边栏", "Café crème", "fooBar²baz", "²fooBar",
	"⺀⺁侧x", "ÉlanVital naïveCafé", "x\xc3(y", "\xe4\xbd侧边", "한국어 텍스트", "カタカナとひらがな",
	"〇〇七 and 々", "0AAAa", "0AAAa é", "getHTTPResponse—“quoted”", "a\u0301bC", "\ue000privateUse", "½ ⅓ x²",
}

// TestAnalyzeUnchanged: Analyze writes what it always wrote.
func TestAnalyzeUnchanged(t *testing.T) {
	t.Parallel()
	for _, s := range tokenizeSeeds {
		if got, want := Analyze(s), analyzeReference(s); got != want {
			t.Errorf("Analyze(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestAnalyzedTokens: the tokens the in-memory index takes from a text are
// those of its analyzed form, for plain and mixed text alike.
func TestAnalyzedTokens(t *testing.T) {
	t.Parallel()
	for _, s := range tokenizeSeeds {
		checkAnalyzedTokens(t, s)
	}
}

func FuzzAnalyzedTokens(f *testing.F) {
	for _, s := range tokenizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Analyze(s), analyzeReference(s); got != want {
			t.Fatalf("Analyze(%q) = %q, want %q", s, got, want)
		}
		checkAnalyzedTokens(t, s)
	})
}

func checkAnalyzedTokens(t *testing.T, s string) {
	t.Helper()
	var got, want []string
	analyzedTokens(s, func(raw string) { got = append(got, raw) })
	rawTokens(analyzeReference(s), func(raw string) { want = append(want, raw) })
	if !slices.Equal(got, want) {
		t.Fatalf("analyzedTokens(%q) = %q, want %q", s, got, want)
	}
}

// stemASCII stems as porterstemmer.StemString does: words made of stems
// and the suffixes the stemmer removes or rewrites, and random letters.
func TestStemASCIIAsStemString(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	stems := []string{"configur", "connect", "relat", "hop", "fil", "disagre", "feed", "sky", "happ", "gener", "electr", "adopt", "a", "zz"}
	suffixes := []string{"", "s", "ss", "sses", "ies", "eed", "ed", "ing", "ational", "tional", "izer", "ization", "ness", "ful",
		"ousness", "iveness", "alize", "icate", "ement", "ment", "ent", "ion", "e", "ll", "y", "ly", "bli", "logi", "at", "bl", "iz"}
	var words []string
	for _, st := range stems {
		for _, suf := range suffixes {
			words = append(words, st+suf)
		}
	}
	for range 20000 {
		b := make([]byte, 3+rng.IntN(maxStemBytes-2))
		for i := range b {
			b[i] = "aeiouybcdlmnstz"[rng.IntN(15)]
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if len(w) <= 2 || len(w) > maxStemBytes {
			continue
		}
		if got, want := stemASCII(w), porterstemmer.StemString(w); got != want {
			t.Fatalf("stemASCII(%q) = %q, StemString gives %q", w, got, want)
		}
	}
}

// TestStemTokenStemsTheFoldedToken: a token is folded (lower case, no
// accents) and, when that leaves three or more ASCII letters, stemmed as
// porterstemmer.StemString stems it; a query's tokens and the index's go
// through the same stemToken.
func TestStemTokenStemsTheFoldedToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ raw, want string }{
		{"domains", porterstemmer.StemString("domains")}, {"Configuring", porterstemmer.StemString("configuring")},
		{"relational", porterstemmer.StemString("relational")}, {"happy", porterstemmer.StemString("happy")},
		{"API", porterstemmer.StemString("api")}, {"go", "go"}, {"environment", porterstemmer.StemString("environment")},
		{"variables", porterstemmer.StemString("variables")}, {"Ponies", porterstemmer.StemString("ponies")},
		{"caresses", porterstemmer.StemString("caresses")}, {"generalization", porterstemmer.StemString("generalization")},
		{"über", porterstemmer.StemString("uber")}, {"naïve", porterstemmer.StemString("naive")}, {"x1", "x1"}, {"abcdefghijklmnopqrstuvwxyzabcdefghij", porterstemmer.StemString("abcdefghijklmnopqrstuvwxyzabcdefghij")},
	} {
		if got := stemToken(c.raw); got != c.want {
			t.Errorf("stemToken(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}
