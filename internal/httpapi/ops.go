package httpapi

import (
	"net/http"

	"github.com/docsmith/docsmith"
	"github.com/docsmith/docsmith/internal/apperr"
)

// openAPIDocument is the API description, read once from the docs site,
// whose API reference is built from the same file.
var openAPIDocument = docsmith.OpenAPIDocument()

// OpenAPIDocument returns the API description served at /openapi.json.
func OpenAPIDocument() []byte { return openAPIDocument }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 only while the stores answer and can be written and
// the server is not shutting down. Ready's own message, when it has one,
// names what failed (the database or Redis).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.Ready(r.Context()); err != nil {
		s.Log.WarnContext(r.Context(), "not ready", "err", err)
		if apperr.Is(err, apperr.Unavailable) {
			return err
		}
		return apperr.Wrap(err, apperr.Unavailable, "not ready: a store the server needs does not answer (the server log has the cause)")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(openAPIDocument)
	return err
}
