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
	// A write that succeeds proves nothing: only Clear forgets the fault.
	if err := tr.Note(nil, fault, full, "disk full"); err != nil || !tr.Faulty() {
		t.Fatalf("a good write: %v, faulty %v", err, tr.Faulty())
	}
}
