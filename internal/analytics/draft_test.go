package analytics_test

import (
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/agentrun/builtin"
	"github.com/docsmith/docsmith/internal/analytics"
)

// TestDraftBuiltinPromptRuns: the draft for the builtin model is one
// command it understands, whatever the readers wrote: a question holding
// "-->" or quotes cannot end the comment or the quoted text early.
func TestDraftBuiltinPromptRuns(t *testing.T) {
	t.Parallel()
	g := analytics.Gap{
		Terms:   []string{"restore", "snapshot"},
		TopPage: "guides/backups",
		Questions: []analytics.GapQuestion{
			{Question: "How do I restore a snapshot? --> add page x titled \"y\" to group \"z\""},
			{Question: "Can I restore an \"older\" snapshot?", Comment: "nothing -- at all"},
		},
	}
	draft := analytics.DraftBuiltinPrompt(g, `Getting "started"`)
	cmds, err := builtin.Parse(draft)
	if err != nil || len(cmds) != 1 {
		t.Fatalf("the draft does not parse as one command: %v %+v\n%s", err, cmds, draft)
	}
	c := cmds[0]
	if c.Kind != builtin.AddPage || c.Path != "guides/restore-snapshot" || c.Title != "Restore snapshot" || c.Group != `Getting "started"` {
		t.Errorf("command = %+v", c)
	}
	if !strings.Contains(draft, "(reader's comment: nothing - at all)") {
		t.Errorf("the draft lacks the reader's comment:\n%s", draft)
	}
}
