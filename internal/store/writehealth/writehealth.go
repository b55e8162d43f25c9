// Package writehealth remembers whether a database's writes fail for a
// reason of its own (a full disk, an I/O error, a read-only server), so
// that readiness can say so until a probe write succeeds again. Each store
// says which of its engine's errors are such faults.
package writehealth

import (
	"errors"
	"sync"

	"github.com/docsmith/docsmith/internal/apperr"
)

// ErrWritesFail: the database answers but cannot be written.
var ErrWritesFail = errors.New("the database cannot be written")

// Tracker holds the last write fault until Clear.
type Tracker struct {
	mu    sync.Mutex
	fault error
}

// Note records err when fault(err) says it is the database's own failure,
// and returns err; a full disk (full(err)) comes back as an apperr
// StorageFull error with message, which a client reads. Other errors (a
// duplicate id, a cancelled request) leave the health as it was.
func (t *Tracker) Note(err error, fault, full func(error) bool, message string) error {
	if err == nil || !fault(err) {
		return err
	}
	t.mu.Lock()
	t.fault = err
	t.mu.Unlock()
	if full(err) {
		return apperr.Wrap(err, apperr.StorageFull, "%s", message)
	}
	return err
}

// Faulty reports whether a write fault is recorded.
func (t *Tracker) Faulty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fault != nil
}

// Clear forgets the fault: only a probe write that surely touched the
// disk should call it, since a commit that changes nothing proves nothing.
func (t *Tracker) Clear() {
	t.mu.Lock()
	t.fault = nil
	t.mu.Unlock()
}
