package httpapi

import (
	"net/http"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/mcpserver"
)

// mcp answers POST /discovery/v1/mcp/{domain}: the Model Context Protocol
// over the domain's docs. The key, the domain and the limits are checked
// here as on the other discovery endpoints, each request counting once;
// the MCP server refuses a request that is not one message (a JSON-RPC
// batch), so each tool call counts. The protocol itself is the MCP
// server's. MCP clients are not browsers, so the endpoint sends no CORS
// headers. The reader's access groups come from its reader token, as on
// the search and page endpoints.
//
// A request with no Authorization header is served read-only, with the
// pages without access groups and against the per client IP limits only,
// when the domain's setting mcp_public allows it, for clients that cannot
// send a header; otherwise it is refused as a missing key is elsewhere,
// the same for a domain that does not exist.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) error {
	if s.MCP == nil {
		return apperr.New(apperr.Unavailable, "the MCP server is not available on this server")
	}
	if r.Header.Get("Authorization") == "" {
		return s.publicMCP(w, r)
	}
	p, d, err := s.assistantDomain(r)
	if err != nil {
		return err
	}
	groups, err := s.readerGroups(r, d)
	if err != nil {
		return err
	}
	if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
		return err
	}
	// The body limit of every other endpoint applies too, where it is
	// lower than the MCP server's own.
	r.Body = http.MaxBytesReader(w, r.Body, s.MaxBodyBytes)
	return s.MCP.ServeMCP(w, r, mcpserver.Access{Domain: d, Groups: groups})
}

// publicMCP serves an MCP request without a key, if the path's domain
// serves its public pages so (mcp_public).
func (s *Server) publicMCP(w http.ResponseWriter, r *http.Request) error {
	d, err := s.publicDomain(r)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return err
	}
	if err != nil || !d.Settings.MCPPublic {
		return apperr.New(apperr.Unauthorized, "the Authorization header is missing; send Authorization: Bearer <assistant key>. "+
			"To let MCP clients without a key read the public pages, the domain's operator turns on its setting mcp_public "+
			"(docsmith domain update --domain %s --mcp-public)", r.PathValue("domain"))
	}
	if len(r.Header.Values(readerTokenHeader)) > 0 {
		return apperr.New(apperr.Unauthorized, "a reader token is read only with an assistant key: send Authorization: Bearer <assistant key> with it, "+
			"or leave the %s header out to read the public pages", readerTokenHeader)
	}
	if err := s.limit(w, r, s.assistantIPRules(s.clientIP(r))...); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.MaxBodyBytes)
	return s.MCP.ServeMCP(w, r, mcpserver.Access{Domain: d, ReadOnly: true})
}
