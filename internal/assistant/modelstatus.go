package assistant

// modelStatus is the status of a model's answer, from what its grounding
// found and the status the question's names decide (see decide; known
// before the model wrote):
//
//   - the model declined and backed no claim with a passage: not covered,
//     with its decline as the note;
//   - strict grounding left out every claim: not covered;
//   - it declined a part: partial, with its decline as the note;
//   - names of the question are not in the docs: partial, or not covered
//     when no other part of the question is, with the names as the note;
//   - else answered.
func modelStatus(st groundingStats, names verdict) (status, note string) {
	decline := ""
	if len(st.declines) > 0 {
		decline = plainText(st.declines[0])
	}
	switch {
	case len(st.declines) > 0 && st.supportedCited == 0:
		return TurnNotCovered, decline
	case st.left > 0 && st.kept == 0:
		return TurnNotCovered, strictNothingText
	case len(st.declines) > 0:
		return TurnPartial, decline
	case names.byName && names.status == TurnNotCovered:
		return TurnNotCovered, names.note
	case names.byName:
		return TurnPartial, "The docs don't mention " + orList(names.missing) + "."
	}
	return TurnAnswered, ""
}

// strictNothingText replaces a model's answer when strict grounding left
// out every sentence of it.
const strictNothingText = "The documentation passages I found do not back an answer to this, so I cannot answer it from the docs."
