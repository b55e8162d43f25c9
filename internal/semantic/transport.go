package semantic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"
)

// Retry settings shared by both clients. The caller's deadline bounds them
// all: a wait that would outlast it is not started.
const (
	defaultMaxAttempts  = 4
	defaultRetryBase    = 250 * time.Millisecond
	defaultMaxRetryWait = 20 * time.Second
	// attemptTimeout bounds one request, so a server that accepts and then
	// never finishes its reply cannot hold an index build that has no
	// deadline of its own; the largest batch takes seconds.
	attemptTimeout = 2 * time.Minute
	// errorBodyBytes is how much of a refused request's reply goes into the
	// error: enough for the provider's message, not a page of HTML.
	errorBodyBytes = 512
)

// newHTTPClient is the client used when the caller gives none. It has no
// overall timeout, the caller's context bounds each call, but a server
// that never accepts or never answers is given up on.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}}
}

// poster sends JSON requests to one provider with retries, bounded replies,
// metrics and classified errors.
type poster struct {
	provider     string
	client       *http.Client
	metrics      *Metrics
	log          *slog.Logger
	apiKey       string
	maxReply     int64
	maxAttempts  int
	retryBase    time.Duration
	maxRetryWait time.Duration
	attemptLimit time.Duration
}

func newPoster(provider, apiKey string, maxReply int64, deps Deps) poster {
	p := poster{
		provider: provider, client: deps.Client, metrics: deps.Metrics, log: deps.Log,
		apiKey: apiKey, maxReply: maxReply,
		maxAttempts: defaultMaxAttempts, retryBase: defaultRetryBase, maxRetryWait: defaultMaxRetryWait,
		attemptLimit: attemptTimeout,
	}
	if p.client == nil {
		p.client = newHTTPClient()
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// attemptError is one failed attempt: its reason, whether another attempt
// may succeed, and the wait the provider asked for.
type attemptError struct {
	reason     string
	retryable  bool
	retryAfter time.Duration
	err        error
}

// post sends body to url and hands the reply's bytes to accept, retrying
// rate limits, server errors and unreachable servers while ctx allows. A
// reply accept refuses is not retried: the server would answer the same.
func (p poster) post(ctx context.Context, url string, body []byte, accept func(reply []byte) (reason string, err error)) error {
	var last *attemptError
	for attempt := 1; ; attempt++ {
		aerr := p.once(ctx, url, body, accept)
		if aerr == nil {
			return nil
		}
		last = aerr
		if ctx.Err() != nil || !aerr.retryable || attempt >= p.maxAttempts {
			break
		}
		wait := p.backoff(attempt, aerr.retryAfter)
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			last.err = fmt.Errorf("%w (not retried: the wait of %s would outlast the deadline)", last.err, wait.Round(time.Millisecond))
			break
		}
		p.log.Warn("search provider request failed; retrying", "provider", p.provider,
			"attempt", attempt, "reason", aerr.reason, "wait", wait, "err", p.redact(aerr.err))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
		case <-timer.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	return p.fail(ctx, last)
}

// fail turns the last attempt's error into an *Error; a context that ended
// is the reason whatever the attempt saw.
func (p poster) fail(ctx context.Context, last *attemptError) error {
	reason, err := last.reason, last.err
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		reason, err = ReasonTimeout, fmt.Errorf("deadline reached: %w", err)
	case errors.Is(ctx.Err(), context.Canceled):
		reason, err = ReasonCanceled, fmt.Errorf("canceled: %w", err)
	}
	return &Error{Provider: p.provider, Reason: reason, Err: errors.New(p.redact(err))}
}

// once is one HTTP request and the check of its reply.
func (p poster) once(ctx context.Context, url string, body []byte, accept func([]byte) (string, error)) *attemptError {
	start := time.Now()
	reply, aerr := p.exchange(ctx, url, body)
	if aerr == nil {
		if reason, err := accept(reply); err != nil {
			aerr = &attemptError{reason: reason, err: err}
		}
	}
	result := "ok"
	if aerr != nil {
		result = aerr.reason
		if ctx.Err() != nil {
			result = ReasonTimeout
			if errors.Is(ctx.Err(), context.Canceled) {
				result = ReasonCanceled
			}
		}
	}
	p.metrics.request(p.provider, result, time.Since(start))
	return aerr
}

func (p poster) exchange(ctx context.Context, url string, body []byte) ([]byte, *attemptError) {
	ctx, cancel := context.WithTimeout(ctx, p.attemptLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &attemptError{reason: ReasonRefused, err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	shown := redactedURL(url)
	resp, err := p.client.Do(req)
	if err != nil {
		reason := ReasonUnreachable
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			reason = ReasonTimeout
		}
		return nil, &attemptError{reason: reason, retryable: true, err: fmt.Errorf("POST %s: %w", shown, err)}
	}
	defer func() { _ = resp.Body.Close() }() // the reply was read or is abandoned; nothing to save
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(shown, resp)
	}
	reply, err := io.ReadAll(io.LimitReader(resp.Body, p.maxReply+1))
	if err != nil {
		reason := ReasonUnreachable
		if ctx.Err() != nil {
			reason = ReasonTimeout
		}
		return nil, &attemptError{reason: reason, retryable: true, err: fmt.Errorf("read reply of %s: %w", shown, err)}
	}
	if int64(len(reply)) > p.maxReply {
		return nil, &attemptError{reason: ReasonMalformed, err: fmt.Errorf("reply of %s is larger than %d bytes", shown, p.maxReply)}
	}
	return reply, nil
}

// statusError classifies a reply other than 200 OK.
func statusError(url string, resp *http.Response) *attemptError {
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	err := fmt.Errorf("POST %s: %s: %s", url, resp.Status, strings.TrimSpace(string(snippet)))
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		return &attemptError{reason: ReasonRateLimited, retryable: true, retryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()), err: err}
	case s >= 500:
		return &attemptError{reason: ReasonServer, retryable: true, retryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()), err: err}
	case s == http.StatusRequestTimeout:
		return &attemptError{reason: ReasonTimeout, retryable: true, err: err}
	default:
		return &attemptError{reason: ReasonRefused, err: err}
	}
}

// redactedURL is raw as errors and logs may show it: without the password
// of a user:password@ in it.
func redactedURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// retryAfter reads a Retry-After header: seconds or an HTTP date. Anything
// else, or a time in the past, is no wait.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 24*3600 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// backoff is the wait before the attempt after attempt: exponential with
// jitter, at least what the provider asked for, at most maxRetryWait.
func (p poster) backoff(attempt int, asked time.Duration) time.Duration {
	d := p.maxRetryWait
	if shift := attempt - 1; shift < 32 {
		if b := p.retryBase << shift; b > 0 && b < d {
			d = b
		}
	}
	d = d/2 + rand.N(d/2+1)
	return min(max(d, asked), p.maxRetryWait)
}

// redact is err's text without the API key, should a provider echo it.
func (p poster) redact(err error) string {
	msg := err.Error()
	if p.apiKey != "" {
		msg = strings.ReplaceAll(msg, p.apiKey, "[redacted]")
	}
	return msg
}

// decode unmarshals a reply, classifying a failure as malformed.
func decode(reply []byte, v any) error {
	if err := json.Unmarshal(reply, v); err != nil {
		return fmt.Errorf("reply is not the expected JSON: %w", err)
	}
	return nil
}
