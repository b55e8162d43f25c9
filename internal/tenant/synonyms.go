package tenant

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/apperr"
)

// A domain's synonyms are groups of words or phrases that mean the same in
// its docs ("teamspace" and "workspace"); a reader's question holding one
// member also searches the others. They extend a built-in table of
// documentation vocabulary. The bounds keep a domain's table what it is
// for, a short list of its own words, and every question's cost of
// matching it small.
const (
	MaxSynonymGroups       = 200
	MaxSynonymMembers      = 10
	MaxSynonymMemberBytes  = 64
	MaxSynonymMemberWords  = 5
	maxSynonymSettingBytes = 16 << 10
)

// CheckSynonyms checks a domain's synonym groups and tidies them: each
// member's spaces are trimmed and collapsed. A group needs two members or
// more, each with a letter or digit, no control characters, at most
// MaxSynonymMemberBytes bytes and MaxSynonymMemberWords words.
func CheckSynonyms(s *DomainSettings) error {
	if len(s.Synonyms) > MaxSynonymGroups {
		return apperr.New(apperr.Invalid, "synonyms: %d groups; at most %d", len(s.Synonyms), MaxSynonymGroups)
	}
	total := 0
	for gi, g := range s.Synonyms {
		if len(g) < 2 || len(g) > MaxSynonymMembers {
			return apperr.New(apperr.Invalid, "synonyms: group %d has %d members; a group needs 2 to %d", gi+1, len(g), MaxSynonymMembers)
		}
		for mi, m := range g {
			m = strings.Join(strings.Fields(m), " ")
			if err := checkSynonymMember(m); err != nil {
				return apperr.New(apperr.Invalid, "synonyms: group %d, member %d %q: %v", gi+1, mi+1, truncate(m, MaxSynonymMemberBytes), err)
			}
			g[mi] = m
			total += len(m)
		}
	}
	if total > maxSynonymSettingBytes {
		return apperr.New(apperr.Invalid, "synonyms: %d bytes in all; at most %d", total, maxSynonymSettingBytes)
	}
	return nil
}

// checkSynonymMember checks one member, its spaces tidied; the error says
// why it is refused, to the person who wrote it.
func checkSynonymMember(m string) error {
	switch {
	case m == "":
		return errors.New("it is empty")
	case len(m) > MaxSynonymMemberBytes:
		return fmt.Errorf("it is longer than %d bytes", MaxSynonymMemberBytes)
	case !utf8.ValidString(m):
		return errors.New("it is not valid UTF-8")
	case len(strings.Fields(m)) > MaxSynonymMemberWords:
		return fmt.Errorf("it has more than %d words", MaxSynonymMemberWords)
	}
	hasWord := false
	for _, r := range m {
		if unicode.IsControl(r) {
			return errors.New("it holds a control character")
		}
		hasWord = hasWord || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	if !hasWord {
		return errors.New("it has no letter or digit")
	}
	return nil
}

// ParseSynonyms reads synonym groups as a flag writes them: groups
// separated by ";", the members of a group by "=" ("teamspace=workspace;
// sign in=log in"). An empty text is no groups. The groups are checked as
// CheckSynonyms checks them.
func ParseSynonyms(text string) ([][]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if len(text) > maxSynonymSettingBytes {
		return nil, apperr.New(apperr.Invalid, "synonyms: %d bytes; at most %d", len(text), maxSynonymSettingBytes)
	}
	var groups [][]string
	for g := range strings.SplitSeq(text, ";") {
		if strings.TrimSpace(g) == "" {
			continue
		}
		groups = append(groups, strings.Split(g, "="))
	}
	s := DomainSettings{Synonyms: groups}
	if err := CheckSynonyms(&s); err != nil {
		return nil, err
	}
	return s.Synonyms, nil
}

// truncate cuts s to at most n bytes, on a rune boundary, for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
