package agentrun

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendToGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config, group, want string
	}{
		{"inline", `{"navigation":{"groups":[{"group":"A","pages":["a", "b"]}]}}`, "a",
			`{"navigation":{"groups":[{"group":"A","pages":["a", "b", "new"]}]}}`},
		{"empty pages", `{"navigation":[{"pages":[],"group":"A"}]}`, "A",
			`{"navigation":[{"pages":["new"],"group":"A"}]}`},
		{"multi-line keeps layout", "{\n  \"groups\": [\n    {\n      \"group\": \"A\",\n      \"pages\": [\n        \"a\"\n      ]\n    }\n  ]\n}",
			"A", "{\n  \"groups\": [\n    {\n      \"group\": \"A\",\n      \"pages\": [\n        \"a\", \"new\"\n      ]\n    }\n  ]\n}"},
		{"nested group object", `{"groups":[{"group":"Outer","pages":["x",{"group":"Inner","pages":["y"]}]}]}`, "Inner",
			`{"groups":[{"group":"Outer","pages":["x",{"group":"Inner","pages":["y", "new"]}]}]}`},
		{"outer after nested", `{"groups":[{"group":"Outer","pages":[{"group":"Inner","pages":["y"]}]}]}`, "Outer",
			`{"groups":[{"group":"Outer","pages":[{"group":"Inner","pages":["y"]}, "new"]}]}`},
	}
	for _, tc := range tests {
		got, err := appendToGroup(tc.config, tc.group, "new")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: result is not valid JSON", tc.name)
		}
	}
	_, err := appendToGroup(`{"groups":[{"group":"A","pages":[]},{"group":"B","pages":[]}]}`, "C", "x")
	if err == nil || !strings.Contains(err.Error(), `"A", "B"`) {
		t.Fatalf("unknown group: %v", err)
	}
}

func TestRemoveNavEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config, want string
		removed            int
	}{
		{"middle", `{"pages":["a", "gone", "b"]}`, `{"pages":["a", "b"]}`, 1},
		{"first", `{"pages":["gone", "a"]}`, `{"pages":["a"]}`, 1},
		{"last", `{"pages":["a", "gone"]}`, `{"pages":["a"]}`, 1},
		{"only", `{"pages":["gone"]}`, `{"pages":[]}`, 1},
		{"multi-line first", "[\n  \"gone\",\n  \"a\"\n]", "[\n  \"a\"\n]", 1},
		{"twice, and keys and values left alone", `{"gone":"gone","pages":["gone",{"group":"g","pages":["x","gone"]}]}`, `{"gone":"gone","pages":[{"group":"g","pages":["x"]}]}`, 2},
		{"absent", `{"pages":["a"]}`, `{"pages":["a"]}`, 0},
	}
	for _, tc := range tests {
		got, n := removeNavEntry(tc.config, "gone")
		if got != tc.want || n != tc.removed {
			t.Errorf("%s:\n got %s (%d)\nwant %s (%d)", tc.name, got, n, tc.want, tc.removed)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: result is not valid JSON", tc.name)
		}
	}
}
