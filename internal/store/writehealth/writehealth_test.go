package writehealth

import (
	"errors"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
)

func TestTracker(t *testing.T) {
	t.Parallel()
	errIO, errFull, errDup := errors.New("i/o"), errors.New("full"), errors.New("duplicate")
	fault := func(err error) bool { return errors.Is(err, errIO) || errors.Is(err, errFull) }
	full := func(err error) bool { return errors.Is(err, errFull) }
	var tr Tracker
	if err := tr.Note(errDup, fault, full, "disk full"); !errors.Is(err, errDup) || tr.Faulty() {
		t.Fatalf("a refusal: %v, faulty %v", err, tr.Faulty())
	}
	if err := tr.Note(errIO, fault, full, "disk full"); !errors.Is(err, errIO) || !tr.Faulty() {
		t.Fatalf("an I/O fault: %v, faulty %v", err, tr.Faulty())
	}
	tr.Clear()
	err := tr.Note(errFull, fault, full, "disk full")
	if !apperr.Is(err, apperr.StorageFull) || apperr.MessageOf(err) != "disk full" || !errors.Is(err, errFull) || !tr.Faulty() {
		t.Fatalf("a full disk: %v, faulty %v", err, tr.Faulty())
	}
	// One success does not clear the fault: Window successes in a row do.
	for i := range Window {
		if !tr.Faulty() {
			t.Fatalf("healthy after %d good writes, want %d", i, Window)
		}
		if err := tr.Note(nil, fault, full, "disk full"); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Faulty() {
		t.Fatalf("still faulty after %d good writes", Window)
	}
}

// TestTrackerCheck: readiness follows the latest writes while there are
// any, and asks for a probe only when no write came since the last check.
// Interleaved faults keep it false, where one probe that fits said ready.
func TestTrackerCheck(t *testing.T) {
	t.Parallel()
	errFull := errors.New("full")
	fault := func(err error) bool { return errors.Is(err, errFull) }
	var tr Tracker
	if err := tr.Check(); err != nil {
		t.Fatalf("Check of a new tracker = %v", err)
	}
	// 9 of 12 writes fail, a success now and then: never ready.
	for i := range 12 {
		var err error
		if i%4 != 3 {
			err = errFull
		}
		_ = tr.Note(err, fault, fault, "disk full")
		if err := tr.Check(); !errors.Is(err, errFull) {
			t.Fatalf("Check after write %d = %v, want the fault", i, err)
		}
	}
	// No write since: only a probe can tell.
	if err := tr.Check(); !errors.Is(err, ErrProbe) {
		t.Fatalf("Check with no new writes = %v, want ErrProbe", err)
	}
	tr.Clear()
	if err := tr.Check(); err != nil || tr.Faulty() {
		t.Fatalf("after Clear: %v, faulty %v", err, tr.Faulty())
	}
}
