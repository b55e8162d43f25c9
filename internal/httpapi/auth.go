package httpapi

import (
	"net/http"
	"strings"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// authenticate checks the bearer key and that it is of the kind the
// endpoint needs.
func (s *Server) authenticate(r *http.Request, want apikey.Kind) (tenant.Principal, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return tenant.Principal{}, apperr.New(apperr.Unauthorized, "the Authorization header is missing; send Authorization: Bearer <key>")
	}
	scheme, key, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return tenant.Principal{}, apperr.New(apperr.Unauthorized, "the Authorization header must be 'Bearer <key>'")
	}
	p, err := s.Tenants.Authenticate(r.Context(), strings.TrimSpace(key))
	if err != nil {
		return tenant.Principal{}, err
	}
	if p.Kind != want {
		if want == apikey.Admin {
			return tenant.Principal{}, apperr.New(apperr.Forbidden, "agent endpoints need an admin key (svc_...); this is an assistant key (svc_dsc_...), which only works on /discovery endpoints")
		}
		return tenant.Principal{}, apperr.New(apperr.Forbidden, "assistant endpoints need an assistant key (svc_dsc_...); this is an admin key (svc_...), which must stay on the server side")
	}
	return p, nil
}

// adminProject authenticates an admin key and loads the path's project of
// its organization.
func (s *Server) adminProject(r *http.Request) (tenant.Project, error) {
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return tenant.Project{}, err
	}
	return s.Tenants.ProjectFor(r.Context(), p, r.PathValue("projectId"))
}
