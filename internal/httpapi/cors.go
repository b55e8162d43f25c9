package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Browsers call the discovery endpoints from the docs site itself (assistant
// keys are public). Each domain lists the origins allowed to; a request from
// any other origin gets no CORS headers, so the browser keeps the answer
// from the page. Preflights carry no credentials, so they are answered
// without authentication: a domain that does not exist and an origin that is
// not allowed look the same.

const (
	// corsMaxAge is how long a browser may reuse a preflight's answer
	// (Chromium caps it at two hours).
	corsMaxAge = 2 * time.Hour
	// corsAllowHeaders are the request headers a widget sends.
	corsAllowHeaders = "Authorization, Content-Type, X-Request-Id, X-Docsmith-Pow, " + readerTokenHeader
	// corsExposeHeaders are the response headers a widget may read: the
	// thread, the request id, the limits, and where to fetch a
	// proof-of-work challenge.
	corsExposeHeaders = "X-Thread-Id, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Docsmith-Pow-Challenge"
)

// cors adds the CORS headers of the path's domain to a discovery endpoint's
// answers, errors included, so that a widget can read why it was refused.
func (s *Server) cors(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if origin := r.Header.Get("Origin"); origin != "" {
			w.Header().Add("Vary", "Origin")
			if s.originAllowed(r, origin) {
				w.Header().Set("Access-Control-Allow-Origin", origin)
				w.Header().Set("Access-Control-Expose-Headers", corsExposeHeaders)
			}
		}
		return h(w, r)
	}
}

// preflight answers a CORS preflight (OPTIONS) for a discovery endpoint
// taking POST.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) error {
	return s.preflightFor("POST, OPTIONS")(w, r)
}

// preflightFor answers a CORS preflight for an endpoint taking methods.
func (s *Server) preflightFor(methods string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Allow", methods)
		if origin := r.Header.Get("Origin"); origin != "" && s.originAllowed(r, origin) {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", strconv.Itoa(int(corsMaxAge.Seconds())))
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// originAllowed reports whether the path's domain lets origin call it. A
// store error counts as not allowed: the request itself will report it.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	if s.Tenants == nil {
		return false
	}
	d, err := s.Tenants.Store().GetDomain(r.Context(), r.PathValue("domain"))
	if err != nil {
		return false
	}
	want := normalizeOrigin(origin)
	for _, o := range d.AllowedOrigins {
		if o == "*" || normalizeOrigin(o) == want {
			return true
		}
	}
	return false
}

// normalizeOrigin reduces an origin or a URL to scheme://host[:port], lower
// case, the form browsers send in the Origin header.
func normalizeOrigin(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.ToLower(strings.TrimRight(s, "/"))
	}
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	}
	return strings.ToLower(u.Scheme) + "://" + host
}
