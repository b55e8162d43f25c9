package assistant

import (
	"regexp"
	"strings"
)

// declineSentence is what the prompt tells the model to write when the
// passages do not answer (all of) the question.
const declineSentence = "The documentation does not cover this."

// declinePatterns recognise a sentence in which a model says that its
// passages do not answer: the sentence it was told to write, and the usual
// ways of saying so. They read a sentence folded to lower case, with
// typographic apostrophes made plain.
var declinePatterns = []*regexp.Regexp{
	regexp.MustCompile(`\b(documentation|docs|passages?|(provided|given) (context|sources?|excerpts?)|information (provided|given|available))\b[^.!?]{0,40}\b(does not|doesn't|do not|don't|did not|didn't|cannot|can't)\s+(seem to\s+)?(cover|mention|say|describe|explain|include|contain|address|specify|provide|discuss|document|answer|list|show)`),
	regexp.MustCompile(`\b(is|are|was|were)\s+(not|n't)\s+(covered|mentioned|documented|described|explained|addressed|included)\s+(in|by)\s+(the|these|this|any)\b`),
	regexp.MustCompile(`\b(isn't|aren't|wasn't|weren't)\s+(covered|mentioned|documented|described|explained|addressed|included)\s+(in|by)\s+(the|these|this|any)\b`),
	regexp.MustCompile(`\b(i|we)\s+(could not|couldn't|cannot|can't|can not|was unable to|am unable to|am not able to|wasn't able to|did not|didn't)\s+(find|answer|locate|see)\b`),
	regexp.MustCompile(`\bno\s+(information|mention|details?|passages?|documentation)\s+(about|on|of|regarding|for|covers|that)\b`),
	regexp.MustCompile(`\bnothing\s+(in|about)\s+the\s+(documentation|docs|passages?)\b`),
	regexp.MustCompile(`\b(i|we)\s+(don't|do not)\s+know\b`),
}

// isDecline reports whether a sentence of a model's answer says that the
// passages do not answer the question (or a part of it).
func isDecline(sentence string) bool {
	s := strings.ToLower(strings.NewReplacer("’", "'", "‘", "'", "*", "", "_", "").Replace(sentence))
	for _, p := range declinePatterns {
		if p.MatchString(s) {
			return true
		}
	}
	return false
}
