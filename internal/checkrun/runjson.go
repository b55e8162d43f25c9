package checkrun

import (
	"encoding/json"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
)

// runJSON is a run as the API answers it and as `docsmith check run
// --format json` prints it: one shape for both, so that a script reads
// either the same way.
type runJSON struct {
	ID       string `json:"id"`
	Domain   string `json:"domain"`
	Trigger  string `json:"trigger"`
	PRNumber int    `json:"prNumber,omitempty"`
	PRLink   string `json:"prLink,omitempty"`
	// Summary is the report's one line (Report.Summary), for a reader
	// that wants no more.
	Summary   string             `json:"summary"`
	Report    answercheck.Report `json:"report"`
	CreatedAt time.Time          `json:"createdAt"`
}

// MarshalJSON writes the run in its API shape, with its summary line.
func (r Run) MarshalJSON() ([]byte, error) {
	return json.Marshal(runJSON{
		ID: r.ID, Domain: r.Domain, Trigger: r.Trigger, PRNumber: r.PRNumber, PRLink: r.PRLink,
		Summary: r.Report.Summary(), Report: r.Report, CreatedAt: r.CreatedAt,
	})
}

// UnmarshalJSON reads a run in its API shape; the summary is derived, so
// it is not read back.
func (r *Run) UnmarshalJSON(data []byte) error {
	var in runJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*r = Run{ID: in.ID, Domain: in.Domain, Trigger: in.Trigger, PRNumber: in.PRNumber, PRLink: in.PRLink, Report: in.Report, CreatedAt: in.CreatedAt}
	return nil
}
