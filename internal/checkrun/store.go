package checkrun

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
)

// Bounds of a stored run.
const (
	// MaxReportBytes bounds a run's report as stored; answers' texts are
	// cut shorter (to ShortAnswerText) to fit, and a report that still
	// does not fit is refused.
	MaxReportBytes = 4 << 20
	// ShortAnswerText is how much of each answer a report too large keeps.
	ShortAnswerText = 300
	// MaxListRuns bounds ListRuns.
	MaxListRuns = 200
	// maxPRLink bounds a run's pull request link.
	maxPRLink = 2000
)

// NewRunID returns "run_" and 32 hex digits: the time in microseconds
// (56 bits), then 72 random bits, so that runs stored in the same
// microsecond still list in the order they were made.
func NewRunID() string {
	var b [16]byte
	us := uint64(time.Now().UnixMicro())
	for i := range 7 {
		b[i] = byte(us >> (8 * (6 - i)))
	}
	_, _ = rand.Read(b[7:]) // crypto/rand.Read never fails
	return "run_" + hex.EncodeToString(b[:])
}

// EncodeReport is a report as stores keep it: JSON, at most
// MaxReportBytes, the answers' texts cut to ShortAnswerText when the
// whole would be larger.
func EncodeReport(r answercheck.Report) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode the report: %w", err)
	}
	if len(data) <= MaxReportBytes {
		return data, nil
	}
	short := r
	short.Checks = make([]answercheck.Compared, len(r.Checks))
	for i, c := range r.Checks {
		c.After.Answer = clipText(c.After.Answer, ShortAnswerText)
		if c.Before != nil {
			b := *c.Before
			b.Answer = clipText(b.Answer, ShortAnswerText)
			c.Before = &b
		}
		short.Checks[i] = c
	}
	if data, err = json.Marshal(short); err != nil {
		return nil, fmt.Errorf("encode the report: %w", err)
	}
	if len(data) > MaxReportBytes {
		return nil, fmt.Errorf("the report of %d checks takes %d bytes, over the %d a run may keep", len(r.Checks), len(data), MaxReportBytes)
	}
	return data, nil
}

// DecodeReport reads a report EncodeReport wrote.
func DecodeReport(data []byte) (answercheck.Report, error) {
	var r answercheck.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return answercheck.Report{}, fmt.Errorf("decode the report: %w", err)
	}
	return r, nil
}

// CheckRun validates a run before it is stored.
func CheckRun(r Run) error {
	switch {
	case r.Domain == "":
		return fmt.Errorf("a run needs its domain")
	case r.Trigger == "":
		return fmt.Errorf("a run needs its trigger")
	case len(r.PRLink) > maxPRLink:
		return fmt.Errorf("the pull request link is %d bytes, over %d", len(r.PRLink), maxPRLink)
	case r.PRNumber < 0:
		return fmt.Errorf("the pull request number %d is negative", r.PRNumber)
	}
	return nil
}

// ListLimit is the limit ListRuns applies: limit, within 1 and
// MaxListRuns (0 or less: MaxListRuns).
func ListLimit(limit int) int {
	if limit <= 0 || limit > MaxListRuns {
		return MaxListRuns
	}
	return limit
}

func clipText(a answercheck.Answer, n int) answercheck.Answer {
	if len(a.Text) > n {
		cut := n
		for cut > 0 && a.Text[cut]&0xC0 == 0x80 {
			cut--
		}
		a.Text = a.Text[:cut] + "…"
	}
	return a
}
