package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	r := run(t, t.TempDir(), "version")
	if r.code != 0 {
		t.Fatalf("version = %+v", r)
	}
	for _, want := range []string{"docsmith " + Version + "\n", "\ncommit    ", "\ngo        " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("version printed %q, want it to contain %q", r.stdout, want)
		}
	}

	r = run(t, t.TempDir(), "version", "--format", "json")
	var got struct{ Version, Commit, Go, Platform string }
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil {
		t.Fatalf("version --format json = %+v (%v)", r, err)
	}
	if got.Version != Version || got.Commit == "" || got.Go != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --format json = %+v", got)
	}

	if r := run(t, t.TempDir(), "version", "--format", "yaml"); r.code != 2 || !strings.Contains(r.stderr, "text or json") {
		t.Errorf("version --format yaml = %+v", r)
	}
}
