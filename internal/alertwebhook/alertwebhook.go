// Package alertwebhook posts signed JSON alerts to a URL a team set: a
// timestamp and an HMAC-SHA256 signature over the timestamp and the body
// in headers, bounded requests, retries with backoff on timeouts and 5xx,
// and the server's policy on which addresses such a URL may reach.
package alertwebhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Headers of an alert.
const (
	// HeaderTimestamp is the Unix time, in seconds, the alert was signed.
	HeaderTimestamp = "X-Docsmith-Timestamp"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256, keyed with the
	// domain's alert secret, of the timestamp, a dot and the body.
	HeaderSignature = "X-Docsmith-Signature"
	// HeaderEvent names what the alert is about.
	HeaderEvent = "X-Docsmith-Event"
	// HeaderDelivery identifies the alert: a retry carries the same one.
	HeaderDelivery = "X-Docsmith-Delivery"
)

// Sign returns the signature header's value for body signed at timestamp
// (Unix seconds) with secret. A receiver computes the same and compares
// in constant time, and refuses a timestamp too far from its clock.
func Sign(secret []byte, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Policy decides which alert URLs the server may call. A team names the
// URL, so by default it must be https:// on a public address: an alert
// cannot be pointed at the server's own network.
type Policy struct {
	// AllowHTTP accepts plain http:// URLs (git_allow_http, the server's
	// one switch for requests in clear).
	AllowHTTP bool
	// AllowPrivate lets alerts reach loopback, private, link-local and
	// other non-public addresses (alert_allow_private), for a receiver
	// inside the network.
	AllowPrivate bool
}

// ErrRefused wraps the errors of a URL or address the policy refuses.
var ErrRefused = errors.New("refused by the server's alert policy")

// CheckURL reports whether the policy accepts u as an alert URL (its
// scheme; the address is checked when the connection is made).
func (p Policy) CheckURL(u *url.URL) error {
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return fmt.Errorf("%w: a plain http:// URL needs git_allow_http on this server; use https://", ErrRefused)
	default:
		return fmt.Errorf("%w: the URL must be https://", ErrRefused)
	}
	if u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: the URL must name a host and no user", ErrRefused)
	}
	return nil
}

// checkAddr refuses a connection to an address that is not public, unless
// the policy allows it. It runs on the address dialled, after the name is
// resolved, so a name that resolves to an inside address is refused too.
func (p Policy) checkAddr(address string) error {
	if p.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read address %s", ErrRefused, address)
	}
	ip := ap.Addr().Unmap()
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || sharedAddressSpace.Contains(ip) {
		return fmt.Errorf("%w: %s is not a public address (alert_allow_private lets alerts reach it)", ErrRefused, ip)
	}
	return nil
}

// sharedAddressSpace is carrier-grade NAT (RFC 6598), inside a provider's
// network like the private ranges.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// Config configures a Sender; zero values take the defaults.
type Config struct {
	Policy Policy
	// Timeout bounds one attempt, the connection and the reply's headers
	// included (default 10s).
	Timeout time.Duration
	// Attempts is how many times an alert is tried at most (default 4).
	Attempts int
	// Backoff is the wait before the second attempt, doubling after each
	// (default 2s); a 429's Retry-After is honoured up to MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
	Registerer prometheus.Registerer
	Log        *slog.Logger
	Now        func() time.Time
	// Transport is the transport under the policy's dialer, for tests that
	// must reach a TLS server with its own certificate; nil builds one.
	Transport *http.Transport
}

// Sender sends alerts.
type Sender struct {
	client     *http.Client
	policy     Policy
	attempts   int
	backoff    time.Duration
	maxBackoff time.Duration
	log        *slog.Logger
	now        func() time.Time
	sent       *prometheus.CounterVec
}

// maxReplyBytes is as much of a reply as is read, so that the connection
// can be reused; the reply's body is not used.
const maxReplyBytes = 64 << 10

// New returns a Sender.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 4
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 2 * time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	transport := cfg.Transport
	if transport == nil {
		transport = &http.Transport{TLSHandshakeTimeout: cfg.Timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: true}
	} else {
		transport = transport.Clone()
	}
	// No proxy: the policy judges the address the alert goes to, which a
	// proxy would hide.
	transport.Proxy = nil
	policy := cfg.Policy
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: func(_, address string, _ syscall.RawConn) error { return policy.checkAddr(address) }}
	transport.DialContext = dialer.DialContext
	transport.ResponseHeaderTimeout = cfg.Timeout
	s := &Sender{
		client: &http.Client{
			Transport: transport,
			Timeout:   cfg.Timeout,
			// A redirect would take the signed alert somewhere the team
			// did not name.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		policy:     policy,
		attempts:   cfg.Attempts,
		backoff:    cfg.Backoff,
		maxBackoff: cfg.MaxBackoff,
		log:        cfg.Log,
		now:        cfg.Now,
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_alert_webhooks_total",
			Help: "Alerts sent to teams' webhooks, by outcome: delivered, failed (after its retries) or refused (by the alert policy).",
		}, []string{"outcome"}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.sent)
	}
	return s
}

// Alert is one alert to send.
type Alert struct {
	URL    string
	Secret []byte
	// Event names what the alert is about (HeaderEvent); ID identifies it
	// (HeaderDelivery).
	Event string
	ID    string
	Body  []byte
}

// Send posts the alert, trying again after a timeout, a connection
// failure, a 5xx or a 429, with backoff, at most Attempts times. Other
// replies (3xx, 4xx) end it at once: the URL or the receiver needs fixing.
// Each attempt is signed anew. The error says why the last attempt failed;
// it never holds the URL's path, which may itself be a secret.
func (s *Sender) Send(ctx context.Context, a Alert) error {
	u, err := url.Parse(a.URL)
	if err == nil {
		err = s.policy.CheckURL(u)
	}
	if err != nil {
		s.sent.WithLabelValues("refused").Inc()
		return fmt.Errorf("alert %s: %w", a.ID, err)
	}
	host := u.Host
	wait := s.backoff
	for attempt := 1; ; attempt++ {
		retry, after, err := s.attempt(ctx, a)
		if err == nil {
			s.sent.WithLabelValues("delivered").Inc()
			s.log.Info("alert: delivered", "id", a.ID, "event", a.Event, "host", host, "attempt", attempt)
			return nil
		}
		if errors.Is(err, ErrRefused) {
			s.sent.WithLabelValues("refused").Inc()
			return fmt.Errorf("alert %s to %s: %w", a.ID, host, err)
		}
		if !retry || attempt >= s.attempts || ctx.Err() != nil {
			s.sent.WithLabelValues("failed").Inc()
			if attempt == 1 {
				return fmt.Errorf("alert %s to %s: %w", a.ID, host, err)
			}
			return fmt.Errorf("alert %s to %s, after %d attempts: %w", a.ID, host, attempt, err)
		}
		if after > 0 {
			wait = min(after, s.maxBackoff)
		}
		s.log.Warn("alert: attempt failed, trying again", "id", a.ID, "host", host, "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.sent.WithLabelValues("failed").Inc()
			return fmt.Errorf("alert %s to %s: stopped before attempt %d: %w", a.ID, host, attempt+1, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, s.maxBackoff)
	}
}

// attempt posts the alert once: whether to try again (and after how long,
// when the receiver said), or the error.
func (s *Sender) attempt(ctx context.Context, a Alert) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		return false, 0, fmt.Errorf("build the request: %w", err)
	}
	ts := s.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "docsmith-alerts")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(a.Secret, ts, a.Body))
	req.Header.Set(HeaderEvent, a.Event)
	req.Header.Set(HeaderDelivery, a.ID)
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return false, 0, err
		}
		// The error names the URL: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, 0, fmt.Errorf("no reply: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReplyBytes))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, 0, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("the receiver answered %s", resp.Status)
	case resp.StatusCode >= 500:
		return true, 0, fmt.Errorf("the receiver answered %s", resp.Status)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return false, 0, fmt.Errorf("the receiver answered %s, a redirect, which alerts do not follow: set the URL it names", resp.Status)
	}
	return false, 0, fmt.Errorf("the receiver answered %s; check the URL and what the receiver expects", resp.Status)
}

// retryAfter reads a Retry-After of seconds; 0 when absent or a date.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}
