package httpapi

import (
	"context"
	"net/http"

	"github.com/altcha-org/altcha-lib-go"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/pow"
	"github.com/docsmith/docsmith/internal/tenant"
)

// ProofOfWork issues and checks the challenges a domain may ask its readers'
// browsers to solve (pow.Service).
type ProofOfWork interface {
	Challenge(domain string) (altcha.Challenge, error)
	// Verify checks a solution and spends it; its refusals are Forbidden.
	Verify(ctx context.Context, domain, payload string) error
}

// powChallengeHeader, on a refusal for a missing or spent proof of work,
// names the endpoint that hands out challenges, so that a widget knows to
// solve one and retry.
const powChallengeHeader = "X-Docsmith-Pow-Challenge"

// powChallenge answers GET /discovery/v1/challenge/{domain} with a new
// ALTCHA challenge. It needs the assistant key, as the endpoints a solution
// opens do; a challenge is cheap to make (one HMAC, nothing stored), so it
// counts against no limit.
func (s *Server) powChallenge(w http.ResponseWriter, r *http.Request) error {
	_, d, err := s.assistantDomain(r)
	if err != nil {
		return err
	}
	if s.ProofOfWork == nil {
		return apperr.New(apperr.Unavailable, "proof-of-work challenges are not available on this server")
	}
	c, err := s.ProofOfWork.Challenge(d.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// requireProofOfWork lets a request through a domain that asks for proof
// of work only with a fresh solution in the X-Docsmith-Pow header.
func (s *Server) requireProofOfWork(w http.ResponseWriter, r *http.Request, d tenant.Domain) error {
	if !d.Settings.ProofOfWork {
		return nil
	}
	if s.ProofOfWork == nil {
		return apperr.New(apperr.Unavailable, "domain %s asks for proof of work, which is not available on this server", d.ID)
	}
	err := s.ProofOfWork.Verify(r.Context(), d.ID, r.Header.Get(pow.Header))
	if apperr.Is(err, apperr.Forbidden) {
		w.Header().Set(powChallengeHeader, "/discovery/v1/challenge/"+d.ID)
	}
	return err
}
