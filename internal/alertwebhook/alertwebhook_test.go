package alertwebhook_test

import (
	"crypto/hmac"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/alertwebhook"
)

var secret = []byte("alert-signing-secret")

// receiver is a local webhook receiver that answers with the statuses
// given in turn (the last one from then on) and checks each request's
// signature as a team's receiver would.
type receiver struct {
	t        *testing.T
	statuses []int
	delay    time.Duration
	hits     atomic.Int32
	bodies   chan []byte
}

func newReceiver(t *testing.T, statuses ...int) (*receiver, *httptest.Server) {
	r := &receiver{t: t, statuses: statuses, bodies: make(chan []byte, 10)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := int(r.hits.Add(1))
	body, _ := io.ReadAll(req.Body)
	ts, err := strconv.ParseInt(req.Header.Get(alertwebhook.HeaderTimestamp), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		r.t.Errorf("timestamp header %q", req.Header.Get(alertwebhook.HeaderTimestamp))
	}
	if got, want := req.Header.Get(alertwebhook.HeaderSignature), alertwebhook.Sign(secret, ts, body); !hmac.Equal([]byte(got), []byte(want)) {
		r.t.Errorf("signature %q, want %q", got, want)
	}
	if req.Header.Get("Content-Type") != "application/json" || req.Header.Get(alertwebhook.HeaderDelivery) != "run-1" || req.Header.Get(alertwebhook.HeaderEvent) != "checks.regressed" {
		r.t.Errorf("headers %v", req.Header)
	}
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	status := r.statuses[min(n, len(r.statuses))-1]
	if status == http.StatusFound {
		w.Header().Set("Location", "https://elsewhere.example/")
	}
	w.WriteHeader(status)
	r.bodies <- body
}

func sender(t *testing.T, p alertwebhook.Policy) (*alertwebhook.Sender, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return alertwebhook.New(alertwebhook.Config{Policy: p, Timeout: 500 * time.Millisecond, Attempts: 3, Backoff: 10 * time.Millisecond, Registerer: reg}), reg
}

var local = alertwebhook.Policy{AllowHTTP: true, AllowPrivate: true}

func alertTo(url string) alertwebhook.Alert {
	return alertwebhook.Alert{URL: url, Secret: secret, Event: "checks.regressed", ID: "run-1", Body: []byte(`{"text":"2 checks regressed"}`)}
}

func outcomes(t *testing.T, s *alertwebhook.Sender, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out = append(out, m.GetLabel()[0].GetValue()+"="+strconv.Itoa(int(m.GetCounter().GetValue())))
		}
	}
	return strings.Join(out, ",")
}

func TestSendSigned(t *testing.T) {
	t.Parallel()
	r, srv := newReceiver(t, http.StatusOK)
	s, reg := sender(t, local)
	if err := s.Send(t.Context(), alertTo(srv.URL+"/hook")); err != nil {
		t.Fatal(err)
	}
	if got := string(<-r.bodies); got != `{"text":"2 checks regressed"}` {
		t.Fatalf("body %s", got)
	}
	if got := outcomes(t, s, reg); got != "delivered=1" {
		t.Fatalf("metric %s", got)
	}
}

func TestSendRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		statuses []int
		delay    time.Duration
		hits     int32
		err      string // empty: delivered
	}{
		{"5xx then delivered", []int{503, 502, 200}, 0, 3, ""},
		{"429 then delivered", []int{429, 200}, 0, 2, ""},
		{"5xx to the end", []int{500}, 0, 3, "after 3 attempts: the receiver answered 500"},
		{"4xx is not retried", []int{404}, 0, 1, "the receiver answered 404 Not Found; check the URL"},
		{"redirect is not followed", []int{302}, 0, 1, "a redirect, which alerts do not follow"},
		{"timeouts are retried", []int{200}, time.Second, 3, "no reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, srv := newReceiver(t, tc.statuses...)
			r.delay = tc.delay
			s, reg := sender(t, local)
			err := s.Send(t.Context(), alertTo(srv.URL+"/hook/secret-path"))
			if tc.err == "" && err != nil {
				t.Fatalf("Send: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Send = %v, want an error with %q", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret-path") {
				t.Fatalf("error %q names the URL's path", err)
			}
			if got := r.hits.Load(); got != tc.hits {
				t.Fatalf("%d requests, want %d", got, tc.hits)
			}
			want := "delivered=1"
			if tc.err != "" {
				want = "failed=1"
			}
			if got := outcomes(t, s, reg); got != want {
				t.Fatalf("metric %s, want %s", got, want)
			}
		})
	}
}

// TestSendPolicy: by default an alert goes over https to a public address
// alone; a name that leads inside the network is refused when connecting,
// before anything is sent.
func TestSendPolicy(t *testing.T) {
	t.Parallel()
	r, srv := newReceiver(t, http.StatusOK)
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, tc := range []struct {
		name   string
		policy alertwebhook.Policy
		url    string
		err    string
	}{
		{"plain http", alertwebhook.Policy{AllowPrivate: true}, srv.URL, "needs git_allow_http"},
		{"loopback address", alertwebhook.Policy{AllowHTTP: true}, srv.URL, "127.0.0.1 is not a public address"},
		{"name of a loopback address", alertwebhook.Policy{AllowHTTP: true}, localhost, "is not a public address"},
		{"not http", local, "ftp://example.com/x", "must be https://"},
		{"private https", alertwebhook.Policy{}, "https://10.1.2.3:9/x", "10.1.2.3 is not a public address"},
		{"link-local https", alertwebhook.Policy{}, "https://169.254.169.254/latest", "is not a public address"},
	} {
		s, reg := sender(t, tc.policy)
		err := s.Send(t.Context(), alertTo(tc.url))
		if !errors.Is(err, alertwebhook.ErrRefused) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: Send = %v, want a refusal with %q", tc.name, err, tc.err)
		}
		if got := outcomes(t, s, reg); got != "refused=1" {
			t.Errorf("%s: metric %s", tc.name, got)
		}
	}
	if n := r.hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}
