package assistant

import (
	"regexp"
	"testing"
	"time"
)

// TestNewThreadID: thread ids keep their form, sort by the time they were
// made, and differ when made at the same moment.
func TestNewThreadID(t *testing.T) {
	t.Parallel()
	form := regexp.MustCompile(`^thr_[0-9a-f]{32}$`)
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	a, b, later := newThreadID(at), newThreadID(at), newThreadID(at.Add(time.Millisecond))
	for _, id := range []string{a, b, later} {
		if !form.MatchString(id) {
			t.Errorf("thread id %q is not thr_ and 32 hex digits", id)
		}
	}
	if a == b {
		t.Errorf("two ids made at the same time are equal: %s", a)
	}
	if a[:16] != b[:16] || a >= later || b >= later {
		t.Errorf("ids do not sort by time: %s, %s, then %s", a, b, later)
	}
}
