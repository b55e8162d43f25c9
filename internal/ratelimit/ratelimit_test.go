package ratelimit_test

import (
	"net/netip"
	"testing"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

func TestClientKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, addr, want string
	}{
		{"ipv4 by itself", "203.0.113.9", "203.0.113.9"},
		{"ipv4-mapped ipv6 as ipv4", "::ffff:203.0.113.9", "203.0.113.9"},
		{"ipv6 by its /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"another address of the same /64", "2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"the next /64", "2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"zone dropped", "fe80::1%eth0", "fe80::/64"},
		{"loopback", "::1", "::/64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ratelimit.ClientKey(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Fatalf("ClientKey(%s) = %s, want %s", tc.addr, got, tc.want)
			}
		})
	}
	if got := ratelimit.ClientKey(netip.Addr{}); got != "unknown" {
		t.Errorf("ClientKey of no address = %q, want unknown", got)
	}
}
