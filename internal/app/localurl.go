package app

import (
	"net"
	"net/netip"
)

// localURL is the base URL a person on this machine opens to reach a server
// listening on addr. An address that listens on every interface (0.0.0.0,
// [::] or no host, as in a container) is reached at 127.0.0.1, which is
// also right from the host of a container whose port is published.
func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
