// Package writehealth remembers whether a database's recent writes failed
// for a reason of its own (a full disk, an I/O error, a read-only server),
// so that readiness follows what real writes meet. Each store says which of
// its engine's errors are such faults.
package writehealth

import (
	"errors"
	"sync"

	"github.com/docsmith/docsmith/internal/apperr"
)

// ErrWritesFail: the database answers but cannot be written.
var ErrWritesFail = errors.New("the database cannot be written")

// Window is how many of the latest writes readiness looks at: a fault among
// them keeps the store not ready. One success is not enough, because on a
// nearly full disk a small write still fits where a larger one does not,
// and readiness would flip with every request.
const Window = 8

// Tracker holds the outcomes of the latest writes.
type Tracker struct {
	mu     sync.Mutex
	faulty [Window]bool // ring of the latest outcomes, true for a fault
	next   int          // where the next outcome goes
	faults int          // faults in the ring
	fault  error        // the latest fault
	wrote  bool         // a write was noted since the last Check
}

// Note records the outcome of a write and returns err. A success and a
// fault (fault(err)) count; other errors (a duplicate id, a cancelled
// request) say nothing about the database and leave its health as it was.
// A full disk (full(err)) comes back as an apperr StorageFull error with
// message, which a client reads.
func (t *Tracker) Note(err error, fault, full func(error) bool, message string) error {
	if err != nil && !fault(err) {
		return err
	}
	t.mu.Lock()
	if t.faulty[t.next] {
		t.faults--
	}
	t.faulty[t.next] = err != nil
	if err != nil {
		t.faults++
		t.fault = err
	}
	t.next = (t.next + 1) % Window
	t.wrote = true
	t.mu.Unlock()
	if err != nil && full(err) {
		return apperr.Wrap(err, apperr.StorageFull, "%s", message)
	}
	return err
}

// Faulty reports whether a fault is among the latest writes.
func (t *Tracker) Faulty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.faults > 0
}

// Check is readiness's question: nil when no fault is among the latest
// writes; the latest fault when there is one and writes were noted since
// the last Check (real writes decide); else ErrProbe, which asks the caller
// to write a probe and Clear on success, since with no writes nothing else
// would ever tell.
func (t *Tracker) Check() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	wrote := t.wrote
	t.wrote = false
	switch {
	case t.faults == 0:
		return nil
	case wrote:
		return t.fault
	}
	return ErrProbe
}

// ErrProbe is Check's answer when only a probe write can tell.
var ErrProbe = errors.New("no write since the last check: a probe write decides")

// Clear forgets every outcome: only a probe write that succeeded, with no
// real writes to go by, should call it.
func (t *Tracker) Clear() {
	t.mu.Lock()
	t.faulty, t.next, t.faults, t.fault, t.wrote = [Window]bool{}, 0, 0, nil, false
	t.mu.Unlock()
}
