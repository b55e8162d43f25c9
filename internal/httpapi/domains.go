package httpapi

import (
	"context"
	"math"
	"net/http"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
)

// Freshness reads what is known of the domains' indexes
// (freshness.Service).
type Freshness interface {
	Status(ctx context.Context, domain string) (freshness.Status, error)
}

type domainJSON struct {
	Domain         string          `json:"domain"`
	ProjectID      string          `json:"projectId"`
	Ref            string          `json:"ref"`
	SiteURL        *string         `json:"siteUrl"`
	Model          string          `json:"model"`
	AllowedOrigins []string        `json:"allowedOrigins"`
	CreatedAt      string          `json:"createdAt"`
	Index          domainIndexJSON `json:"index"`
}

// domainIndexJSON is what is known of a domain's index: the commit it was
// built from, the branch head last seen, and the last failure.
type domainIndexJSON struct {
	Commit      *string `json:"commit"`
	IndexedAt   *string `json:"indexedAt"`
	Head        *string `json:"head"`
	HeadSeenAt  *string `json:"headSeenAt"`
	Pages       int     `json:"pages"`
	Passages    int     `json:"passages"`
	DurationMs  int64   `json:"durationMs"`
	LastError   *string `json:"lastError"`
	LastErrorAt *string `json:"lastErrorAt"`
	Failures    int     `json:"failures"`
	LagSeconds  int64   `json:"lagSeconds"`
}

// renderIndexStatus is a domain's index status as the API shows it.
func renderIndexStatus(st freshness.Status) domainIndexJSON {
	return domainIndexJSON{
		Commit:      stringOrNull(st.Commit),
		IndexedAt:   timeOrNull(st.IndexedAt),
		Head:        stringOrNull(st.Head),
		HeadSeenAt:  timeOrNull(st.HeadSeenAt),
		Pages:       st.Pages,
		Passages:    st.Passages,
		DurationMs:  st.Duration.Milliseconds(),
		LastError:   stringOrNull(st.LastError),
		LastErrorAt: timeOrNull(st.LastErrorAt),
		Failures:    st.Failures,
		LagSeconds:  int64(math.Ceil(st.Lag.Seconds())),
	}
}

// getDomain answers with the domain and the state of its index, with an
// admin key of the domain's organization.
func (s *Server) getDomain(w http.ResponseWriter, r *http.Request) error {
	if s.Freshness == nil {
		return apperr.New(apperr.Unavailable, "index status is not available on this server")
	}
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	if err != nil {
		return err
	}
	project, err := s.Tenants.Store().GetProject(r.Context(), d.ProjectID)
	if err != nil {
		return err
	}
	st, err := s.Freshness.Status(r.Context(), d.ID)
	if err != nil {
		return err
	}
	origins := d.AllowedOrigins
	if origins == nil {
		origins = []string{}
	}
	writeJSON(w, http.StatusOK, domainJSON{
		Domain: d.ID, ProjectID: d.ProjectID, Ref: freshness.RefOf(d, project), SiteURL: stringOrNull(d.SiteURL),
		Model: d.Model, AllowedOrigins: origins, CreatedAt: formatTime(d.CreatedAt), Index: renderIndexStatus(st),
	})
	return nil
}
