package engine

import (
	"slices"
	"strings"
	"sync"
)

// Synonyms. Readers ask in their words, docs answer in theirs: "log in"
// where the docs say "sign in", "repo" where they say "repository". A
// synonym table holds groups of words or phrases that mean the same in
// documentation; a question holding one member of a group also searches
// the others, as optional terms weighing synonymWeight (see
// Term.Expansion), so that they rank a passage without making a question
// seem to ask more than it did. The more the docs use the reader's own
// words, the less a synonym weighs, down to nothing (see gatedWeight).

// synonymWeight weighs a synonym's matches against the reader's own words:
// a passage in the docs' words is found, yet one in the reader's words
// ranks first.
const synonymWeight = 0.4

// maxSynonymTerms bounds the terms synonyms add to one question.
const maxSynonymTerms = 12

// builtinSynonymGroups is documentation vocabulary that means the same on
// any docs site: set-up and account words, common abbreviations and their
// long forms, and British and American spellings. Nothing in it is a
// product's own name.
var builtinSynonymGroups = [][]string{
	// Setting up and taking down.
	{"install", "set up", "setup"},
	{"uninstall", "remove", "delete"},
	{"upgrade", "update to the latest version", "latest version"},
	{"enable", "turn on", "switch on", "activate"},
	{"disable", "turn off", "switch off", "deactivate"},
	{"self-host", "self-hosted", "on-premises", "on-prem", "own server"},
	{"requirements", "prerequisites", "system requirements"},
	{"quickstart", "quick start", "getting started", "get started"},
	{"troubleshoot", "troubleshooting", "debug"},
	// Accounts and access.
	{"sign in", "log in", "login", "signin", "log on"},
	{"sign out", "log out", "logout", "signout"},
	{"sign up", "signup", "register", "create an account", "registration"},
	{"auth", "authentication"},
	{"authz", "authorization", "authorisation"},
	{"api key", "api token", "access token", "secret key"},
	{"sso", "single sign-on"},
	{"2fa", "two-factor authentication", "mfa", "multi-factor authentication"},
	{"permissions", "access control", "rbac"},
	{"admin", "administrator"},
	{"organization", "organisation", "org"},
	{"password", "passphrase"},
	// Configuration and code.
	{"config", "configuration", "settings"},
	{"env var", "environment variable", "env variable"},
	{"env", "environment"},
	{"repo", "repository"},
	{"docs", "documentation"},
	{"param", "parameter"},
	{"arg", "argument"},
	{"spec", "specification"},
	{"dir", "directory", "folder"},
	{"db", "database"},
	{"app", "application"},
	{"cli", "command line", "command-line interface"},
	{"ide", "code editor"},
	{"pr", "pull request", "merge request"},
	{"ci", "continuous integration"},
	{"k8s", "kubernetes"},
	{"js", "javascript"},
	{"ts", "typescript"},
	{"py", "python"},
	{"i18n", "internationalization", "localization", "l10n", "translations"},
	{"a11y", "accessibility"},
	{"ssl", "tls"},
	{"url", "web address"},
	{"max", "maximum"},
	{"min", "minimum"},
	{"example", "sample"},
	// Things on the screen.
	{"dark mode", "dark theme", "night mode"},
	{"keyboard shortcut", "hotkey", "key binding", "keybinding"},
	{"sidebar", "side navigation", "side menu"},
	{"search bar", "search box", "search field"},
	{"dashboard", "admin panel", "control panel"},
	{"plugin", "plug-in", "extension", "add-on", "addon"},
	{"notification", "alert"},
	{"changelog", "release notes", "what's new"},
	{"faq", "frequently asked questions"},
	{"custom domain", "own domain", "vanity domain"},
	// Plans and limits.
	{"pricing", "plans", "price"},
	{"billing", "invoice", "payment"},
	{"cancel subscription", "unsubscribe"},
	{"rate limit", "throttling", "quota"},
	// Spellings.
	{"color", "colour"},
	{"behavior", "behaviour"},
	{"customize", "customise"},
	{"customization", "customisation"},
	{"license", "licence"},
	{"analyze", "analyse"},
	{"optimize", "optimise"},
	{"initialize", "initialise"},
	{"catalog", "catalogue"},
	{"favorite", "favourite"},
	{"center", "centre"},
}

// SynonymTable is a compiled list of synonym groups: each member as the
// words a query term searches and as the stems a question is matched on.
// It is never changed once compiled, and safe for concurrent use.
type SynonymTable struct {
	groups [][]synonymMember
	// byFirst lists, under the stem of its first word, every member.
	byFirst map[string][]memberRef
}

type synonymMember struct {
	words []string // lower case, as a query term holds them
	stems []string // as the index's words: folded and stemmed
}

type memberRef struct{ group, member int }

// CompileSynonyms compiles groups of synonyms. A member without a word, and
// a group left with fewer than two members, are skipped: the groups a
// domain sets are checked before they are stored (see the tenant package),
// so this only has to be safe.
func CompileSynonyms(groups [][]string) *SynonymTable {
	t := &SynonymTable{byFirst: map[string][]memberRef{}}
	for _, g := range groups {
		var members []synonymMember
		for _, m := range g {
			var sm synonymMember
			analyzedTokens(m, func(raw string) {
				sm.words = append(sm.words, strings.ToLower(raw))
				sm.stems = append(sm.stems, stemToken(raw))
			})
			// "self-host" and "self-hosted" search the same stems: one
			// of them is enough.
			if len(sm.words) > 0 && !slices.ContainsFunc(members, func(o synonymMember) bool { return slices.Equal(o.stems, sm.stems) }) {
				members = append(members, sm)
			}
		}
		if len(members) < 2 {
			continue
		}
		gi := len(t.groups)
		t.groups = append(t.groups, members)
		for mi, m := range members {
			t.byFirst[m.stems[0]] = append(t.byFirst[m.stems[0]], memberRef{gi, mi})
		}
	}
	return t
}

// builtinSynonyms is builtinSynonymGroups compiled, once.
var builtinSynonyms = sync.OnceValue(func() *SynonymTable { return CompileSynonyms(builtinSynonymGroups) })

// BuiltinSynonyms returns the built-in table of documentation synonyms.
func BuiltinSynonyms() *SynonymTable { return builtinSynonyms() }

// Len is the number of groups.
func (t *SynonymTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.groups)
}

// appendExpansions appends to terms, weighing synonymWeight, the other
// members of every group that has a member in the question q; at most
// maxSynonymTerms in all, counting those added from other tables.
func (t *SynonymTable) appendExpansions(terms []Term, q *questionWords, added *int) []Term {
	if t == nil {
		return terms
	}
	for i := range q.raws {
		for _, ref := range t.byFirst[string(q.stem(i))] {
			if !q.holdsAt(i, t.groups[ref.group][ref.member]) {
				continue
			}
			for oi, other := range t.groups[ref.group] {
				if oi == ref.member || *added >= maxSynonymTerms || q.holds(other) || hasOptionalTerm(terms, other.words) {
					continue
				}
				terms = append(terms, Term{Words: other.words, Weight: synonymWeight, standsFor: t.groups[ref.group][ref.member].words})
				*added++
			}
		}
	}
	return terms
}

// questionWords are a question's words as written and as the index holds
// them (see Words).
type questionWords struct {
	raws []string
	// stems holds the words' stems one after the other, ends where each
	// ends: built in place, so that a question's stems are no strings.
	stems []byte
	ends  []int
	runes [maxStemBytes]rune
}

// stem is word i's stem.
func (q *questionWords) stem(i int) []byte {
	start := 0
	if i > 0 {
		start = q.ends[i-1]
	}
	return q.stems[start:q.ends[i]]
}

// holdsAt reports whether the question's words from i on start with m's.
// Stems alone would say too much: "settings" and "set" share one, and
// "customize" and "custom"; so a word must also start as the member's
// word does but for its last two letters ("installing", "setting").
func (q *questionWords) holdsAt(i int, m synonymMember) bool {
	if len(m.stems) > len(q.raws)-i {
		return false
	}
	for k, st := range m.stems {
		raw, w := q.raws[i+k], m.words[k]
		n := max(len(w)-2, 1)
		if string(q.stem(i+k)) != st || len(raw) < n || !strings.EqualFold(raw[:n], w[:n]) {
			return false
		}
	}
	return true
}

// holds reports whether the question holds m somewhere: its words need
// not be searched again as a synonym.
func (q *questionWords) holds(m synonymMember) bool {
	for i := range q.raws {
		if q.holdsAt(i, m) {
			return true
		}
	}
	return false
}

// hasOptionalTerm reports whether terms have an optional term of words
// already, the reader's own or another synonym's.
func hasOptionalTerm(terms []Term, words []string) bool {
	for _, t := range terms {
		if !t.Prefix && !t.Required && slices.Equal(t.Words, words) {
			return true
		}
	}
	return false
}

// ExpandSynonyms adds to the question's terms the synonyms, from each
// table, of the words and phrases it holds.
func ExpandSynonyms(question string, terms []Term, tables ...*SynonymTable) []Term {
	q := questionWordsPool.Get().(*questionWords)
	defer q.release()
	Tokens(question, q.add)
	added := 0
	for _, t := range tables {
		terms = t.appendExpansions(terms, q, &added)
	}
	return terms
}

// maxQuestionWords bounds the words of a question matched against the
// tables: a pasted page need not be.
const maxQuestionWords = 64

// questionWordsPool keeps questionWords between questions, so that matching
// one allocates nothing.
var questionWordsPool = sync.Pool{New: func() any { return new(questionWords) }}

// add takes the question's next word, as Tokens gives it, and its stem as
// Words would: a word of ASCII letters is folded and stemmed in place.
func (q *questionWords) add(raw string) {
	if len(q.raws) == maxQuestionWords {
		return
	}
	q.raws = append(q.raws, raw)
	if isPlainASCII(raw) {
		start := len(q.stems)
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			q.stems = append(q.stems, c)
		}
		word := q.stems[start:]
		q.stems = appendStem(q.stems[:start], word, &q.runes)
	} else {
		q.stems = append(q.stems, stemToken(raw)...)
	}
	q.ends = append(q.ends, len(q.stems))
}

// release clears q, which must not keep the question's text alive, and
// returns it to the pool.
func (q *questionWords) release() {
	clear(q.raws)
	q.raws, q.stems, q.ends = q.raws[:0], q.stems[:0], q.ends[:0]
	questionWordsPool.Put(q)
}
