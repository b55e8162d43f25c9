package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/tenant"
)

// limit counts the request against rules and sets the RateLimit headers;
// over a limit it returns a RateLimited error and sets Retry-After.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, rules ...ratelimit.Rule) error {
	return s.limitOnce(w, r, "", rules...)
}

// limitOnce is limit for a request that token names (empty: none), so that
// its retries, even concurrent ones, are counted once.
func (s *Server) limitOnce(w http.ResponseWriter, r *http.Request, token string, rules ...ratelimit.Rule) error {
	d, err := s.Limiter.AllowOnce(r.Context(), token, rules...)
	if err != nil {
		return err
	}
	return limited(w, d)
}

// limited sets the RateLimit headers of a decision; when it refused the
// request, it sets Retry-After and returns a RateLimited error.
func limited(w http.ResponseWriter, d ratelimit.Decision) error {
	if d.Binding.Rule.Limit == 0 {
		return nil // no limit configured
	}
	h := w.Header()
	reset := ratelimit.RetryAfterSeconds(d.Binding.ResetIn)
	h.Set("RateLimit-Limit", strconv.Itoa(d.Binding.Rule.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Binding.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(reset))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(reset))
		return apperr.New(apperr.RateLimited, "%s", d.Message())
	}
	return nil
}

// Month is the assistant key limit's window.
const Month = 30 * 24 * time.Hour

// BurstWindow is the window of the assistant's per client IP burst limit.
const BurstWindow = 10 * time.Second

// assistantRules are the assistant limits for one request: SPEC §6's three,
// which are the ceilings, and the short per-IP windows below them. A store
// records a hit only when every rule has room, so a client refused by its
// short window spends nothing of the key's month or the organization's hour.
func (s *Server) assistantRules(p tenant.Principal, clientIP netip.Addr) []ratelimit.Rule {
	return append(s.assistantIPRules(clientIP),
		ratelimit.Rule{Name: "assistant requests per key", Key: "assistant:key:" + p.KeyID, Limit: s.Limits.AssistantPerKeyMonth, Window: Month},
		ratelimit.Rule{Name: "assistant requests per organization", Key: "assistant:org:" + p.OrgID, Limit: s.Limits.AssistantPerOrgHour, Window: time.Hour},
	)
}

// assistantIPRules are the assistant's per client IP limits alone (burst,
// minute, day), also for the public discovery endpoints, which have no key
// to count against.
func (s *Server) assistantIPRules(clientIP netip.Addr) []ratelimit.Rule {
	client := ratelimit.ClientKey(clientIP)
	return []ratelimit.Rule{
		{Name: "assistant requests per client IP", Key: "assistant:ip-burst:" + client, Limit: s.Limits.AssistantPerIPBurst, Window: BurstWindow},
		{Name: "assistant requests per client IP", Key: "assistant:ip-minute:" + client, Limit: s.Limits.AssistantPerIPMinute, Window: time.Minute},
		{Name: "assistant requests per client IP", Key: "assistant:ip:" + client, Limit: s.Limits.AssistantPerIPDay, Window: 24 * time.Hour},
	}
}

// clientIP is the connection's peer, unless the peer is a trusted proxy: then
// the right-most X-Forwarded-For address that is not itself a trusted proxy.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		addr = addr.Unmap()
		if !s.trusted(addr) {
			return addr
		}
	}
	return peer
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
