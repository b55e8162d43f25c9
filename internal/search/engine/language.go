package engine

import (
	"strings"
	"unicode"
)

// Stop words and a small language guesser for questions. The lists are
// function words (and the conversational verbs of a question) of the
// languages docs sites are most often translated into; a question in
// another language keeps all its words, which only costs some ranking noise.

// stopWord reports whether w (lower case) is a stop word of lang.
func stopWord(lang, w string) bool {
	switch lang {
	case "en":
		return stopEN(w)
	case "es":
		return stopES(w)
	case "fr":
		return stopFR(w)
	case "de":
		return stopDE(w)
	case "pt":
		return stopPT(w)
	}
	return false
}

func stopEN(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "aren",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "cannot", "could", "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during",
		"each", "either", "else", "etc", "ever", "every", "few", "for", "from", "further", "had", "hadn", "has", "hasn",
		"have", "haven", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however",
		"i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "let", "lets", "ll", "may", "me", "might",
		"mine", "more", "most", "must", "my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "off", "on",
		"once", "one", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "please", "re",
		"really", "same", "shall", "she", "should", "shouldn", "so", "some", "such", "than", "that", "the",
		"their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to",
		"too", "under", "until", "up", "us", "ve", "very", "via", "want", "was", "wasn", "way", "we", "were", "weren",
		"what", "whats", "when", "where", "whether", "which", "while", "who", "whom", "why", "will", "with",
		"won", "would", "wouldn", "yes", "yet", "you", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}

func stopES(w string) bool {
	switch w {
	case "a", "al", "algo", "alguna", "alguno", "algunos", "ante", "aqui", "aquí", "como", "cómo", "con", "cual",
		"cuál", "cuales", "cuáles", "cuando", "cuándo", "cuanto", "cuánto", "de", "del", "desde", "donde", "dónde",
		"el", "él", "ella", "ellos", "en", "entre", "era", "es", "esa", "ese", "eso", "esta", "está", "estas",
		"este", "esto", "estos", "fue", "ha", "hace", "hacer", "hay", "la", "las", "le", "les", "lo", "los", "más",
		"me", "mi", "mis", "mucho", "muy", "ni", "no", "nos", "o", "otra", "otro", "para", "pero", "poco", "por",
		"porque", "puedo", "puede", "pueden", "que", "qué", "quien", "quién", "se", "sea", "ser", "si", "sí",
		"sin", "sobre", "son", "su", "sus", "también", "tengo", "tiene", "todo", "todos", "tu", "tú", "tus", "un",
		"una", "uno", "unos", "unas", "usted", "y", "ya", "yo", "debo", "quiero", "hago":
		return true
	}
	return false
}

func stopFR(w string) bool {
	switch w {
	case "a", "à", "ai", "au", "aux", "avec", "c", "ce", "ces", "cet", "cette", "comme", "comment", "d", "dans",
		"de", "des", "du", "elle", "en", "est", "et", "être", "eu", "faire", "il", "ils", "j", "je", "l", "la",
		"le", "les", "leur", "lui", "m", "ma", "mais", "me", "mes", "moi", "mon", "n", "ne", "nos", "notre", "nous",
		"on", "ou", "où", "par", "pas", "peut", "peux", "pour", "puis", "quand", "que", "quel", "quelle", "quelles",
		"quels", "qui", "s", "sa", "sans", "se", "ses", "si", "son", "sont", "sur", "t", "ta", "te", "tes", "toi",
		"ton", "tu", "un", "une", "vos", "votre", "vous", "y", "dois", "doit", "faut", "veux", "qu", "ça":
		return true
	}
	return false
}

func stopDE(w string) bool {
	switch w {
	case "aber", "als", "am", "an", "auch", "auf", "aus", "bei", "bin", "bis", "das", "dass", "dem", "den", "der",
		"des", "die", "du", "ein", "eine", "einen", "einem", "einer", "es", "für", "hat", "ich", "ihr", "im", "in",
		"ist", "kann", "mein", "meine", "mit", "nach", "nicht", "noch", "oder", "sich", "sie", "sind", "so", "und",
		"uns", "von", "vor", "was", "wie", "wir", "wo", "zu", "zum", "zur", "wird", "werden", "welche", "warum":
		return true
	}
	return false
}

func stopPT(w string) bool {
	switch w {
	case "a", "ao", "as", "com", "como", "da", "das", "de", "do", "dos", "e", "é", "ela", "ele", "em", "está",
		"eu", "isso", "mais", "mas", "meu", "minha", "na", "nas", "no", "não", "nos", "o", "os", "ou", "para",
		"pela", "pelo", "por", "posso", "pode", "qual", "quando", "que", "se", "sem", "seu", "sua", "um", "uma",
		"onde", "porque", "preciso":
		return true
	}
	return false
}

// latinLanguages are the languages with stop-word lists, in the order ties
// are broken.
func latinLanguages() []string { return []string{"en", "es", "fr", "de", "pt"} }

// DetectLanguage guesses the language of a short text: "zh", "ja" or "ko" from
// its script, otherwise the language whose function words it uses most
// ("en", "es", "fr", "de", "pt"). It returns "" when it cannot tell.
func DetectLanguage(text string) string {
	var han, kana, hangul, latin int
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.IsLetter(r):
			latin++
		}
	}
	switch {
	case kana > 0 && kana+han >= latin/4:
		return "ja"
	case hangul > 0 && hangul >= latin/4:
		return "ko"
	case han > 0 && han >= latin/4:
		return "zh"
	}
	counts := map[string]int{}
	for w := range strings.FieldsFuncSeq(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) }) {
		for _, l := range latinLanguages() {
			if stopWord(l, w) {
				counts[l]++
			}
		}
	}
	// Letters only one of the languages uses settle close calls.
	for _, r := range text {
		switch r {
		case 'ñ', '¿', '¡':
			counts["es"] += 2
		case 'ç', 'è', 'ê', 'œ', 'î', 'û':
			counts["fr"] += 2
		case 'ß', 'ä', 'ö', 'ü':
			counts["de"] += 2
		case 'ã', 'õ':
			counts["pt"] += 2
		}
	}
	best, bestN, second := "", 0, 0
	for _, l := range latinLanguages() {
		switch n := counts[l]; {
		case n > bestN:
			best, bestN, second = l, n, bestN
		case n > second:
			second = n
		}
	}
	if bestN < 2 || bestN == second {
		return ""
	}
	return best
}

// SameLanguage reports whether two language codes name the same language:
// their primary subtags match, with Mintlify's aliases ("cn" for Chinese,
// "jp" for Japanese).
func SameLanguage(a, b string) bool {
	return PrimaryLanguage(a) == PrimaryLanguage(b)
}

// PrimaryLanguage is the primary subtag of a language code, lower case
// ("pt-BR" → "pt").
func PrimaryLanguage(code string) string {
	code = strings.ToLower(strings.TrimSpace(code))
	if i := strings.IndexAny(code, "-_"); i >= 0 {
		code = code[:i]
	}
	switch code {
	case "cn":
		return "zh"
	case "jp":
		return "ja"
	case "kr":
		return "ko"
	}
	return code
}
