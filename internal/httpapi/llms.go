package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/llmstxt"
	"github.com/docsmith/docsmith/internal/tenant"
)

// llmsMaxAge is how long a client or a CDN may reuse llms.txt without
// asking again; an index build shows within that time.
const llmsMaxAge = 5 * time.Minute

// llmsIndex answers GET /discovery/v1/llms.txt/{domain}: the public pages'
// titles, links and descriptions, in navigation order.
func (s *Server) llmsIndex(w http.ResponseWriter, r *http.Request) error {
	return s.serveLLMs(w, r, llmstxt.IndexOf)
}

// llmsFull answers GET /discovery/v1/llms-full.txt/{domain}: every public
// page as Markdown.
func (s *Server) llmsFull(w http.ResponseWriter, r *http.Request) error {
	return s.serveLLMs(w, r, llmstxt.FullOf)
}

// serveLLMs serves one of the llms files of the path's domain. They are
// public, like the docs site they describe: no key, pages with access groups
// left out, counted against the per-IP assistant limits only. An ETag lets a
// client that has the file get a 304.
func (s *Server) serveLLMs(w http.ResponseWriter, r *http.Request, render func(context.Context, llmstxt.Docs, tenant.Domain) ([]byte, error)) error {
	d, err := s.publicDomain(r)
	if err != nil {
		return err
	}
	if err := s.limit(w, r, s.assistantIPRules(s.clientIP(r))...); err != nil {
		return err
	}
	body, err := render(r.Context(), s.Assistant, d)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(llmsMaxAge.Seconds())))
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", llmstxt.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// publicDomain loads the path's domain for an endpoint that needs no key.
func (s *Server) publicDomain(r *http.Request) (tenant.Domain, error) {
	if s.Assistant == nil {
		return tenant.Domain{}, apperr.New(apperr.Unavailable, "the assistant is not available on this server")
	}
	return s.Tenants.Store().GetDomain(r.Context(), r.PathValue("domain"))
}

// etagMatches reports whether an If-None-Match header names etag (or *).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
