package httpapi

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// TestJobJSONTrigger checks the job object's additive trigger and
// workflow fields, and that the seed's fields are still all there.
func TestJobJSONTrigger(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		job                   agentjob.Job
		trigger, workflowJSON string
	}{
		{agentjob.Job{ID: "a", CreatedAt: t0, Trigger: agentjob.TriggerAPI}, `"api"`, `null`},
		{agentjob.Job{ID: "b", CreatedAt: t0}, `"api"`, `null`},
		{agentjob.Job{ID: "c", CreatedAt: t0, Trigger: agentjob.TriggerSchedule, Workflow: "weekly"}, `"schedule"`, `"weekly"`},
		{agentjob.Job{ID: "d", CreatedAt: t0, Trigger: agentjob.TriggerPush, Workflow: "from-api"}, `"push"`, `"from-api"`},
	} {
		b, err := json.Marshal(renderJob(c.job))
		if err != nil {
			t.Fatal(err)
		}
		got := decodeObject(t, string(b))
		if string(got["trigger"]) != c.trigger || string(got["workflow"]) != c.workflowJSON {
			t.Errorf("job %s: trigger %s workflow %s", c.job.ID, got["trigger"], got["workflow"])
		}
		for _, seed := range []string{"id", "status", "source", "model", "prLink", "createdAt", "archivedAt"} {
			if _, ok := got[seed]; !ok {
				t.Errorf("job %s lacks the seed's %s", c.job.ID, seed)
			}
		}
	}
}

// decodeObject decodes a JSON object keeping its raw values, to check
// which keys a response has and which are null.
func decodeObject(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, s)
	}
	return m
}

func keysOf(m map[string]json.RawMessage) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}
