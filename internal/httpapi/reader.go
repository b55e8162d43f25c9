package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/readertoken"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/secretsource"
	"github.com/docsmith/docsmith/internal/tenant"
)

// readerTokenHeader carries a reader token: the signed word of the site's
// own backend on which access groups its signed-in reader has. The
// assistant key is public, so nothing else a request says about its
// reader's groups is believed.
const readerTokenHeader = "X-Docsmith-Reader-Token"

// readerGroups returns the access groups of the request's reader: those of
// its reader token, or none without a token. A token that cannot be
// trusted is refused with 401, never read as no token, so a site learns
// that its reader lost access instead of seeing pages quietly go missing.
func (s *Server) readerGroups(r *http.Request, d tenant.Domain) ([]string, error) {
	values := r.Header.Values(readerTokenHeader)
	if len(values) == 0 {
		return nil, nil
	}
	if len(values) > 1 {
		return nil, apperr.New(apperr.Unauthorized, "send one %s header, not %d", readerTokenHeader, len(values))
	}
	token := strings.TrimSpace(values[0])
	if token == "" {
		return nil, apperr.New(apperr.Unauthorized, "the %s header is empty; send a reader token or leave the header out", readerTokenHeader)
	}
	src := secretsource.Source{Env: d.Settings.ReaderSecretEnv, File: d.Settings.ReaderSecretFile}
	if !src.Named() {
		return nil, apperr.New(apperr.Unauthorized, "domain %q takes no reader tokens: its operator has set no reader secret "+
			"(docsmith domain update --reader-secret-env or --reader-secret-file); without a token, only pages without access groups are served", d.ID)
	}
	// Read at each use, so that a rotated secret applies at once.
	secret, err := secretsource.Reader{}.Read(src)
	if err != nil {
		return nil, s.readerSecretUnusable(r, d, err)
	}
	reader, err := readertoken.Verify(token, secret, d.ID, time.Now())
	var refused *readertoken.Error
	if errors.As(err, &refused) {
		return nil, apperr.New(apperr.Unauthorized, "%s", refused.Reason)
	}
	if err != nil {
		return nil, s.readerSecretUnusable(r, d, err)
	}
	return reader.Groups, nil
}

// readerSecretUnusable reports a domain whose reader secret is named but
// cannot be used: the operator's to fix, so the cause goes to the log and
// the caller hears only that tokens cannot be checked.
func (s *Server) readerSecretUnusable(r *http.Request, d tenant.Domain, err error) error {
	s.Log.ErrorContext(r.Context(), "reader secret unusable", "domain", d.ID, "err", err)
	return apperr.New(apperr.Unavailable, "reader tokens of domain %q cannot be checked right now; the cause is in the server log", d.ID)
}

// readerFilter replaces the groups of a decoded filter with the reader's.
// Groups named in the body are ignored: older widgets send them, and they
// prove nothing.
func (s *Server) readerFilter(r *http.Request, d tenant.Domain, f *search.Filter) error {
	groups, err := s.readerGroups(r, d)
	if err != nil {
		return err
	}
	if len(f.Groups) > 0 {
		s.Log.DebugContext(r.Context(), "access groups named in the request body ignored; they come from a reader token",
			"domain", d.ID, "token", r.Header.Get(readerTokenHeader) != "")
	}
	f.Groups = groups
	return nil
}
