package core

import (
	"net/http"
	"time"
)

// MaxIdleConnsPerHost is how many idle connections to one model server a
// client from NewHTTPClient keeps for the next call. The default transport
// keeps 2, so that with more answers streaming at once than that, most
// calls paid for a new connection; one per answer streaming at once is
// what a busy server needs.
const MaxIdleConnsPerHost = 256

// ReadBufferSize is the buffer each connection reads the network into. A
// streamed answer arrives as hundreds of small events; when several have
// arrived, one read takes them all, where the default 4 KiB took them a
// few at a time, with a system call (and, downstream, a flush to the
// reader) for each.
const ReadBufferSize = 32 << 10

// NewHTTPClient returns a client for model servers: the default transport's
// settings (the proxy from the environment, its timeouts, HTTP/2), with an
// idle pool per host sized for many answers streaming at once, and no
// Timeout, which would cut long answers (the callers bound their calls).
func NewHTTPClient() *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, IdleConnTimeout: 90 * time.Second}
	}
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	t.ReadBufferSize = ReadBufferSize
	t.MaxIdleConns = max(t.MaxIdleConns, MaxIdleConnsPerHost)
	return &http.Client{Transport: t}
}
