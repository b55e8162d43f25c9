package engine

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestAnalyze(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text stays", "plain text stays"},
		{"use $randomUUID here", "use $randomUUID random UUID here"},
		{"HTTPServer and getID2", "HTTPServer HTTP Server and getID2 get ID2"},
		{"JUnit and iPhone", "JUnit and iPhone"},
		{"侧边栏导航", " 侧边 边栏 栏导 导航 "},
		{"页", " 页 "},
		{"hidden: true 在侧边栏", "hidden: true  在侧 侧边 边栏 "},
		{"Café crème", "Café crème"},
	}
	for _, tt := range tests {
		if got := Analyze(tt.in); got != tt.want {
			t.Errorf("Analyze(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestFieldsAnalyzed: a chunk's ranked fields, as the index analyses
// them.
func TestFieldsAnalyzed(t *testing.T) {
	t.Parallel()
	c := Chunk{
		PageTitle:  "Brewing tea",
		Breadcrumb: []string{"Guides", "Brewing tea", "Green tea"},
		Keywords:   "steepTime",
		Text:       "绿茶",
	}
	raw := rawFields(c)
	f := Fields{Title: Analyze(raw.Title), Headings: Analyze(raw.Headings), Keywords: Analyze(raw.Keywords), Body: Analyze(raw.Body)}
	want := Fields{Title: "Brewing tea", Headings: "Guides\nGreen tea", Keywords: "steepTime steep Time", Body: " 绿茶 "}
	if f != want {
		t.Errorf("fields = %+v, want %+v", f, want)
	}
}

func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"How do I change the colour of the sidebar?", "en"},
		{"¿Cómo cambio el color de la barra lateral?", "es"},
		{"Comment changer la couleur de la barre latérale ?", "fr"},
		{"Wie ändere ich die Farbe der Seitenleiste?", "de"},
		{"Como posso mudar a cor da barra lateral?", "pt"},
		{"如何更改侧边栏的颜色？", "zh"},
		{"サイドバーの色を変更するには？", "ja"},
		{"사이드바 색상을 어떻게 바꾸나요?", "ko"},
		{"mint dev", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := DetectLanguage(tt.in); got != tt.want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSameLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"zh", "cn", true},
		{"zh-Hans", "zh", true},
		{"pt-BR", "pt", true},
		{"ja", "jp", true},
		{"en", "es", false},
		{"", "en", false},
	}
	for _, tt := range tests {
		if got := SameLanguage(tt.a, tt.b); got != tt.want {
			t.Errorf("SameLanguage(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCamelParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"randomUUID", []string{"random", "UUID"}},
		{"getUserById", []string{"get", "User", "By", "Id"}},
		{"XMLHttpRequest", []string{"XML", "Http", "Request"}},
		{"lowercase", []string{"lowercase"}},
		{"JUnit", []string{"JUnit"}},
	}
	for _, tt := range tests {
		if got := camelParts(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("camelParts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// camelCuts cuts a word where camelParts splits it.
func FuzzCamelCuts(f *testing.F) {
	for _, s := range []string{"randomUUID", "getUserById", "XMLHttpRequest", "lowercase", "JUnit", "iPhone",
		"HTTPServer", "getID2", "ÉtéÀBientôt", "aB", "ABc", "xÅngström\xffAb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		var got []string
		p := 0
		for _, c := range camelCuts(w, nil) {
			got = append(got, w[p:c])
			p = c
		}
		got = append(got, w[p:])
		want := camelParts(w)
		if !utf8.ValidString(w) {
			// camelParts spells an invalid byte U+FFFD in a part it cuts;
			// compare runes.
			for i := range got {
				got[i] = string([]rune(got[i]))
			}
			for i := range want {
				want[i] = string([]rune(want[i]))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("camelCuts(%q) gives %q, camelParts %q", w, got, want)
		}
	})
}

// isCJK's and isTokenRune's shortcuts agree with the Unicode tables on
// every rune.
func TestRuneClassesEveryRune(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		cjk := r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
		if isCJK(r) != cjk {
			t.Fatalf("isCJK(%U) = %v", r, isCJK(r))
		}
		tok := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) ||
				unicode.Is(unicode.Co, r) || r >= 0x300 && unicode.Is(unicode.Mn, r))
		if isTokenRune(r) != tok {
			t.Fatalf("isTokenRune(%U) = %v", r, isTokenRune(r))
		}
	}
}

func TestWordsAreWholeStemmedWords(t *testing.T) {
	var got []string
	Words("The entire randomUUID setup, configured", func(_, w string) { got = append(got, w) })
	want := []string{"the", "entir", "randomuuid", "random", "uuid", "setup", "configur"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func TestStopWord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lang, word string
		want       bool
	}{
		{"en", "The", true},
		{"en", "doesn", true},
		{"en", "webhook", false},
		{"fr", "le", true},
		{"fr", "the", true},
		{"en", "le", false},
	}
	for _, tc := range tests {
		if got := StopWord(tc.lang, tc.word); got != tc.want {
			t.Errorf("StopWord(%q, %q) = %v, want %v", tc.lang, tc.word, got, tc.want)
		}
	}
}

// Tokens then Stem are Words, token for token.
func TestTokensThenStemAreWords(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"Running retries of maxRetries", "Résumé café", "配置文件 v2.1 flies", ""} {
		var words, tokens []string
		Words(text, func(raw, w string) { words = append(words, raw+"="+w) })
		Tokens(text, func(raw string) { tokens = append(tokens, raw+"="+Stem(raw)) })
		if !slices.Equal(tokens, words) {
			t.Errorf("%q: Tokens then Stem %q, Words %q", text, tokens, words)
		}
	}
}
