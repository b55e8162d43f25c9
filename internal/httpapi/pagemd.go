package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// MarkdownContentType is what a page is served as to a reader asking for
// Markdown.
const MarkdownContentType = "text/markdown; charset=utf-8"

// maxPagePathBytes bounds a page path in a URL; no docs page has a path
// near it.
const maxPagePathBytes = 1024

// pageByPath answers GET /discovery/v1/page/{domain}/{path...}: the page as
// the POST page endpoint gives it. With an assistant key it has that
// endpoint's reader token, CORS and limits; without one it is public, as
// llms.txt and llms-full.txt are: pages without access groups only, counted
// against the per-IP limits, so that an agent following llms.txt needs no
// key. A path ending in ".md", or a request that accepts text/markdown,
// gets the page's Markdown itself; any other gets the JSON {path, content}.
// This is where a docs site sends "{page URL}.md", the URL its llms.txt
// links to (see docs/assistant/mcp-and-llms-txt.mdx for the proxy rule).
func (s *Server) pageByPath(w http.ResponseWriter, r *http.Request) error {
	err := s.servePageByPath(w, r)
	if apperr.Is(err, apperr.NotFound) {
		writeJSON(w, http.StatusNotFound, pageNotFound{Message: apperr.MessageOf(err)})
		return nil
	}
	return err
}

func (s *Server) servePageByPath(w http.ResponseWriter, r *http.Request) error {
	d, groups, err := s.pageReader(w, r)
	if err != nil {
		return err
	}
	raw := r.PathValue("path")
	if len(raw) > maxPagePathBytes {
		return apperr.New(apperr.Invalid, "the page path is %d bytes long, over the limit of %d", len(raw), maxPagePathBytes)
	}
	path, asMarkdown := strings.CutSuffix(raw, ".md")
	asMarkdown = asMarkdown || acceptsMarkdown(r.Header.Values("Accept"))
	if strings.TrimSpace(path) == "" {
		return apperr.New(apperr.Invalid, "name a page after the domain: /discovery/v1/page/%s/guides/setup.md", d.ID)
	}
	page, err := s.Assistant.Page(r.Context(), d, path, groups)
	if apperr.Is(err, apperr.NotFound) && !strings.HasSuffix(path, "/index") {
		// "guides.md" is how a site names the Markdown of guides/index,
		// the page its URL "/guides" shows.
		if index, indexErr := s.Assistant.Page(r.Context(), d, path+"/index", groups); indexErr == nil {
			page, err = index, nil
		}
	}
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept")
	if !asMarkdown {
		writeJSON(w, http.StatusOK, pageJSON{Path: page.Path, Content: page.Content})
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", MarkdownContentType)
	h.Set("Content-Length", strconv.Itoa(len(page.Content)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(page.Content))
	}
	return nil
}

// pageReader is the domain a page-by-path request reads and the access
// groups it may see: a request with a key (or a reader token) is checked as
// the POST page endpoint checks it; one without is a public reader.
func (s *Server) pageReader(w http.ResponseWriter, r *http.Request) (tenant.Domain, []string, error) {
	if r.Header.Get("Authorization") == "" && r.Header.Get(readerTokenHeader) == "" {
		d, err := s.publicDomain(r)
		if err != nil {
			return tenant.Domain{}, nil, err
		}
		if err := s.limit(w, r, s.assistantIPRules(s.clientIP(r))...); err != nil {
			return tenant.Domain{}, nil, err
		}
		return d, nil, nil
	}
	p, d, err := s.assistantDomain(r)
	if err != nil {
		return tenant.Domain{}, nil, err
	}
	var filter search.Filter
	if err := s.readerFilter(r, d, &filter); err != nil {
		return tenant.Domain{}, nil, err
	}
	if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
		return tenant.Domain{}, nil, err
	}
	return d, filter.Groups, nil
}

// acceptsMarkdown reports whether an Accept header asks for text/markdown
// (with a quality above 0).
func acceptsMarkdown(accept []string) bool {
	for _, header := range accept {
		for _, item := range strings.Split(header, ",") {
			mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil || mediaType != "text/markdown" {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
				continue
			}
			return true
		}
	}
	return false
}
