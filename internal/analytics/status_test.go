package analytics

import (
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
)

// A conversation is as covered as its least covered answer.
func TestConversationStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		turns []string
		want  string
	}{
		{[]string{assistant.TurnAnswered}, StatusAnswered},
		{[]string{assistant.TurnAnswered, assistant.TurnPartial}, StatusPartial},
		{[]string{assistant.TurnPartial, assistant.TurnNotCovered, assistant.TurnAnswered}, StatusNotCovered},
		{[]string{assistant.TurnNotCovered, assistant.TurnPartial}, StatusNotCovered},
		{[]string{assistant.TurnFailed}, StatusAnswered},
	}
	for _, tc := range tests {
		var turns []TurnRecord
		for _, s := range tc.turns {
			turns = append(turns, TurnRecord{Status: s})
		}
		if got := summarize(assistant.Thread{ID: "thr"}, turns).Status; got != tc.want {
			t.Errorf("statuses %v: conversation %s, want %s", tc.turns, got, tc.want)
		}
	}
	if err := CheckFilter(ConversationFilter{Status: StatusPartial}); err != nil {
		t.Errorf("partial filter refused: %v", err)
	}
	if err := CheckFilter(ConversationFilter{Status: "nope"}); err == nil {
		t.Error("unknown status accepted")
	}
}

// Partial and not covered answers are content gaps; answered ones are not
// unless rated down or weakly matched.
func TestReasonsForStatus(t *testing.T) {
	t.Parallel()
	strong := []assistant.TurnSource{{Score: 0.9}}
	tests := []struct {
		status string
		want   string
	}{
		{assistant.TurnNotCovered, ReasonNotCovered},
		{assistant.TurnPartial, ReasonPartial},
		{assistant.TurnAnswered, ""},
	}
	for _, tc := range tests {
		rs := reasonsFor(TurnRecord{Status: tc.status, Sources: strong}, 0.5)
		got := ""
		if len(rs) > 0 {
			got = rs[0]
		}
		if got != tc.want {
			t.Errorf("status %s: reasons %v, want %q", tc.status, rs, tc.want)
		}
	}
}
