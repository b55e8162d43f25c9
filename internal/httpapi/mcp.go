package httpapi

import (
	"net/http"

	"github.com/docsmith/docsmith/internal/apperr"
)

// mcp answers POST /discovery/v1/mcp/{domain}: the Model Context Protocol
// over the domain's docs. The key, the domain and the limits are checked
// here as on the other discovery endpoints, each request counting once;
// the MCP server refuses a request that is not one message (a JSON-RPC
// batch), so each tool call counts. The protocol itself is the MCP
// server's. MCP clients are not browsers, so the endpoint sends no CORS
// headers. The reader's access groups come from its reader token, as on
// the search and page endpoints.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) error {
	if s.MCP == nil {
		return apperr.New(apperr.Unavailable, "the MCP server is not available on this server")
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
	return s.MCP.ServeMCP(w, r, d, groups)
}
