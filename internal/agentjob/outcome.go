package agentjob

import (
	"errors"
	"time"
)

// A runner says how a failed turn should end by the error it returns, as a
// job queue's typed control-flow errors do: RetryAfter for a failure that may
// pass (a forge answering 5xx or 429, a network error), Cancel for a turn
// that must stop without running again, and anything else fails the turn at
// once. Each carries the error the caller reads.

// RetryError asks for the turn to run again after Delay. The run counts
// against the turn's attempts; on the last attempt the turn fails with Err.
type RetryError struct {
	Delay time.Duration
	Err   error
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// RetryAfter wraps err so that the turn runs again after delay.
func RetryAfter(delay time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &RetryError{Delay: delay, Err: err}
}

// CancelError ends the turn canceled: it does not run again, and the job
// fails with Err unless another message waits behind it.
type CancelError struct{ Err error }

func (e *CancelError) Error() string { return e.Err.Error() }
func (e *CancelError) Unwrap() error { return e.Err }

// Cancel wraps err so that the turn ends canceled.
func Cancel(err error) error {
	if err == nil {
		return nil
	}
	return &CancelError{Err: err}
}

// classify turns a runner's error into an outcome, with the delay of a retry.
func classify(err error) (Outcome, time.Duration) {
	var retry *RetryError
	var cancel *CancelError
	switch {
	case err == nil:
		return OutcomeDone, 0
	case errors.As(err, &cancel):
		return OutcomeCanceled, 0
	case errors.As(err, &retry):
		return OutcomeRetry, retry.Delay
	}
	return OutcomeFailed, 0
}
