package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// retrying wraps an adapter with the retries, the call timeout and the error
// wording that every provider shares.
type retrying struct {
	inner   Model
	cfg     Config
	secrets []string
}

func (r *retrying) Name() string { return r.inner.Name() }

// Chat calls the adapter until it answers, retrying rate limits, server
// errors, connection errors and streams cut short, but only while no text
// has reached onText: a retry after that would send the same text twice.
func (r *retrying) Chat(ctx context.Context, req Request, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.CallTimeout, ErrCallTimeout)
	defer cancel()
	start := time.Now()
	streamed := false
	relay := func(delta string) {
		if delta == "" {
			return
		}
		streamed = true
		if onText != nil {
			onText(delta)
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := r.inner.Chat(ctx, req, relay)
		if err == nil {
			r.cfg.Log.Debug("model answered", "model", r.Name(), "attempts", attempt,
				"duration", time.Since(start), "input_tokens", resp.Usage.InputTokens,
				"output_tokens", resp.Usage.OutputTokens, "stop", resp.StopReason)
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, r.stopped(ctx, streamed, nil)
		}
		if streamed {
			if _, ok := retryable(err); ok {
				err = fmt.Errorf("%w; not retried, because part of the answer had already been streamed", err)
			}
			return Response{}, r.clean(err)
		}
		retryAfter, ok := retryable(err)
		if !ok {
			return Response{}, r.clean(err)
		}
		if attempt > r.cfg.MaxRetries {
			if attempt == 1 {
				return Response{}, r.clean(fmt.Errorf("%w (not retried: retries are off)", err))
			}
			return Response{}, r.clean(fmt.Errorf("%w (gave up after %d attempts)", err, attempt))
		}
		wait := r.backoff(attempt, retryAfter)
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			return Response{}, r.clean(fmt.Errorf("%w (not retried: the wait of %s would outlast the call's deadline)", err, wait.Round(time.Millisecond)))
		}
		r.cfg.Log.Warn("model call failed; retrying", "model", r.Name(), "attempt", attempt,
			"wait", wait, "err", r.clean(err).Error())
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return Response{}, r.stopped(ctx, false, err)
		case <-timer.C:
		}
	}
}

// retryable reports whether another attempt may succeed, and how long the
// provider asked to wait first.
func retryable(err error) (time.Duration, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch s := apiErr.StatusCode; {
		case s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooManyRequests, s >= 500:
			return apiErr.RetryAfter, true
		}
		return 0, false
	}
	if errors.Is(err, ErrStreamCut) {
		return 0, true
	}
	var (
		certErr     *tls.CertificateVerificationError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
		return 0, false // the same certificate will fail the same way
	}
	var urlErr *url.Error
	return 0, errors.As(err, &urlErr)
}

// backoff is the wait before the attempt after attempt: exponential with
// jitter, at least what the provider asked for, at most MaxRetryWait.
func (r *retrying) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := r.cfg.MaxRetryWait
	if shift := attempt - 1; shift < 32 {
		if b := r.cfg.RetryBase << shift; b > 0 && b < d {
			d = b
		}
	}
	d = d/2 + rand.N(d/2+1)
	d = max(d, retryAfter)
	return min(d, r.cfg.MaxRetryWait)
}

// stopped describes a call that ctx ended, the call timeout or the caller,
// while it streamed or while it waited to retry after lastErr.
func (r *retrying) stopped(ctx context.Context, streamed bool, lastErr error) error {
	if !errors.Is(context.Cause(ctx), ErrCallTimeout) {
		return fmt.Errorf("%s: call stopped by its caller: %w", r.Name(), ctx.Err())
	}
	msg := fmt.Sprintf("%s: no complete answer within %s (the call timeout)", r.Name(), r.cfg.CallTimeout)
	switch {
	case lastErr != nil:
		msg += "; the last attempt failed: " + r.clean(lastErr).Error()
	case streamed:
		msg += ": the server is slow or stuck, part of the answer had been streamed; raise the call timeout or check the server"
	default:
		msg += ": the server is slow or stuck; raise the call timeout or check the server"
	}
	return &timeoutError{msg: msg}
}

// clean makes sure no API key shows in err's text.
func (r *retrying) clean(err error) error {
	msg := err.Error()
	for _, s := range r.secrets {
		if s != "" && strings.Contains(msg, s) {
			return &redactedError{err: err, secrets: r.secrets}
		}
	}
	return err
}

// timeoutError is ErrCallTimeout and context.DeadlineExceeded, in words.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }

func (e *timeoutError) Is(target error) bool {
	return target == ErrCallTimeout || target == context.DeadlineExceeded
}

// redactedError hides the secrets in the text of the error it wraps.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
