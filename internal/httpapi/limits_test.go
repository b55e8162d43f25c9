package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	s := &Server{Deps: Deps{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	tests := []struct {
		name, remote, forwarded, want string
	}{
		{"untrusted peer ignores header", "203.0.113.5:1234", "198.51.100.7", "203.0.113.5"},
		{"trusted proxy forwards", "10.1.2.3:80", "198.51.100.7", "198.51.100.7"},
		{"right-most untrusted hop wins", "10.1.2.3:80", "192.0.2.1, 198.51.100.7, 10.9.9.9", "198.51.100.7"},
		{"garbage hop stops at the proxy", "10.1.2.3:80", "not-an-ip", "10.1.2.3"},
		{"only proxies", "10.1.2.3:80", "10.4.4.4", "10.1.2.3"},
		{"ipv6 peer", "[2001:db8::1]:443", "", "2001:db8::1"},
		{"mapped ipv4", "[::ffff:203.0.113.9]:443", "", "203.0.113.9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.RemoteAddr = tc.remote
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-For", tc.forwarded)
			}
			if got := s.clientIP(r).String(); got != tc.want {
				t.Fatalf("clientIP = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAssistantLimits checks the three assistant scopes against the real
// store: each one refuses the request over its own limit and names itself.
func TestAssistantLimits(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := &Server{Deps: Deps{
		Limiter: ratelimit.New(store, clock),
		Limits:  Limits{AssistantPerKeyMonth: 5, AssistantPerOrgHour: 3, AssistantPerIPDay: 4},
	}}
	ip := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	keyA := tenant.Principal{OrgID: "acme", KeyID: "key-a"}
	keyB := tenant.Principal{OrgID: "acme", KeyID: "key-b"}
	other := tenant.Principal{OrgID: "other", KeyID: "key-c"}

	allow := func(p tenant.Principal, addr netip.Addr) (bool, *httptest.ResponseRecorder, error) {
		w := httptest.NewRecorder()
		err := s.limit(w, httptest.NewRequest(http.MethodPost, "/", nil), s.assistantRules(p, addr)...)
		return err == nil, w, err
	}
	// Three requests per org per hour, spread over two keys and two IPs.
	for i, p := range []tenant.Principal{keyA, keyB, keyA} {
		if ok, _, err := allow(p, ip("192.0.2."+strconv.Itoa(i%2+1))); !ok {
			t.Fatalf("request %d refused: %v", i, err)
		}
	}
	ok, w, err := allow(keyB, ip("192.0.2.9"))
	if ok || !apperr.Is(err, apperr.RateLimited) {
		t.Fatalf("fourth org request allowed: %v", err)
	}
	if msg := apperr.MessageOf(err); msg == "" || !contains(msg, "per organization") {
		t.Fatalf("message %q does not name the organization limit", msg)
	}
	if w.Header().Get("Retry-After") == "" || w.Header().Get("RateLimit-Limit") != "3" || w.Header().Get("RateLimit-Remaining") != "0" {
		t.Fatalf("headers = %v", w.Header())
	}
	// Another organization is not affected; the same IP is limited per day.
	for i := 0; i < 2; i++ {
		if ok, _, err := allow(other, ip("192.0.2.1")); !ok {
			t.Fatalf("other org request %d refused: %v", i, err)
		}
	}
	if ok, _, err := allow(other, ip("192.0.2.1")); ok || !contains(apperr.MessageOf(err), "per client IP") {
		t.Fatalf("fifth request from 192.0.2.1 today: allowed=%v err=%v", ok, err)
	}
	// Two hours later the org window has passed; the key limit (5 a month) binds.
	now = now.Add(2 * time.Hour)
	if ok, _, err := allow(keyA, ip("198.51.100.1")); !ok {
		t.Fatalf("key A after the hour: %v", err)
	}
	if ok, _, err := allow(keyA, ip("198.51.100.2")); !ok {
		t.Fatalf("key A fourth this month: %v", err)
	}
	now = now.Add(2 * time.Hour)
	if ok, _, err := allow(keyA, ip("198.51.100.3")); !ok {
		t.Fatalf("key A fifth this month: %v", err)
	}
	now = now.Add(2 * time.Hour)
	if ok, _, err := allow(keyA, ip("198.51.100.4")); ok || !contains(apperr.MessageOf(err), "per key") {
		t.Fatalf("key A sixth this month: allowed=%v err=%v", ok, err)
	}
}

// TestClientIPLimitBySubnet checks that the per-IP limit counts an IPv6
// client by its /64: a client cannot get around it with a fresh address of
// its subnet for every request.
func TestClientIPLimitBySubnet(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Server{Deps: Deps{
		Limiter: ratelimit.New(store, func() time.Time { return now }),
		Limits:  Limits{AssistantPerIPDay: 2},
	}}
	p := tenant.Principal{OrgID: "acme", KeyID: "key-a"}
	allow := func(addr string) error {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		return s.limit(httptest.NewRecorder(), r, s.assistantRules(p, netip.MustParseAddr(addr))...)
	}
	for _, addr := range []string{"2001:db8:5:6::1", "2001:db8:5:6:ffff:ffff:ffff:ffff"} {
		if err := allow(addr); err != nil {
			t.Fatalf("request from %s refused: %v", addr, err)
		}
	}
	if err := allow("2001:db8:5:6::abcd"); !apperr.Is(err, apperr.RateLimited) || !contains(apperr.MessageOf(err), "per client IP") {
		t.Fatalf("third request from the same /64: %v; want the per-IP limit", err)
	}
	// The next /64 and an IPv4 client have limits of their own.
	for _, addr := range []string{"2001:db8:5:7::1", "192.0.2.1", "192.0.2.2"} {
		if err := allow(addr); err != nil {
			t.Fatalf("request from %s refused: %v", addr, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestAssistantShortIPLimits checks that one client IP firing far past its
// burst is refused by its short window before it spends the long ones: the
// key's month and the organization's hour count only the requests served,
// and another client IP is still served.
func TestAssistantShortIPLimits(t *testing.T) {
	t.Parallel()
	const burst = 5
	// A stopped clock: every request falls in the same 10 seconds however
	// slowly the machine runs them.
	now := time.Now().UTC().Truncate(time.Microsecond)
	s := newAssistantServerAt(t, Limits{AssistantPerKeyMonth: 10000, AssistantPerOrgHour: 10000, AssistantPerIPDay: 10000, AssistantPerIPMinute: 60, AssistantPerIPBurst: burst},
		func() time.Time { return now })
	endpoints := []struct{ path, body string }{
		{"/discovery/v1/search/tern", `{"query":"sync"}`},
		{"/discovery/v1/page/tern", `{"path":"guides/sync"}`},
		{v2Path, question},
	}
	served, refused := 0, 0
	for i := range 40 {
		c := endpoints[i%len(endpoints)]
		r := s.post(c.path, s.assistant, c.body, "X-Forwarded-For", "203.0.113.7")
		switch r.status {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
			refused++
			if msg := r.errorMessage(t); !strings.Contains(msg, "per client IP is 5 per 10s") {
				t.Fatalf("request %d refused by %q, want the burst limit", i, msg)
			}
			if r.header.Get("Retry-After") == "" {
				t.Fatalf("request %d: 429 without Retry-After", i)
			}
		default:
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	if served != burst || refused != 40-burst {
		t.Fatalf("served %d, refused %d; want %d served", served, refused, burst)
	}

	// Only the served requests are in the long windows.
	parsed, err := apikey.Parse(s.assistant)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"assistant:key:" + parsed.ID, "assistant:org:acme", "assistant:ip:203.0.113.7"} {
		_, usage, err := s.store.Take(t.Context(), now, "", []ratelimit.Rule{{Name: "probe", Key: key, Limit: 1 << 30, Window: Month}})
		if err != nil {
			t.Fatal(err)
		}
		if used := usage[0].Used - 1; used != burst {
			t.Errorf("%s counts %d requests, want the %d served", key, used, burst)
		}
	}

	if r := s.post("/discovery/v1/search/tern", s.assistant, `{"query":"sync"}`, "X-Forwarded-For", "198.51.100.20"); r.status != http.StatusOK {
		t.Fatalf("another client IP: %d %s", r.status, r.body)
	}
}
