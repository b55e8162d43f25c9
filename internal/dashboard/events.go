package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

// describeEvent is a timeline line for an event: what a person wants to
// read, from the event's type and data. Unknown types show their data.
func describeEvent(e agentjob.JobEvent) string {
	var d map[string]any
	_ = json.Unmarshal(e.Data, &d) // a bad payload shows as its type alone
	s := func(k string) string {
		if v, ok := d[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	switch e.Type {
	case agentjob.EventStatus:
		out := "Status: " + s("status")
		if v := s("error"); v != "" {
			out += " — " + v
		}
		if v := s("summary"); v != "" {
			out += " — " + v
		}
		return out
	case agentjob.EventMessageQueued:
		return "Message " + s("seq") + " queued"
	case agentjob.EventTurnStarted:
		return "Turn " + s("seq") + " started"
	case agentjob.EventTurnFinished:
		out := "Turn " + s("seq") + " finished"
		if v := s("state"); v != "" {
			out += ": " + v
		}
		return out
	case "checkout":
		return "Checked out " + s("branch") + " from " + s("base")
	case "tool":
		out := "Tool " + s("name")
		if v := strings.TrimPrefix(s("target"), s("name")+" "); v != "" && v != s("name") {
			out += " " + v
		}
		if s("ok") == "false" {
			out += " (failed)"
		}
		return out
	case "validation":
		if s("ok") == "true" {
			return "Validation passed"
		}
		return "Validation found " + s("problems") + " problem(s)"
	case "commit":
		sha := s("sha")
		if len(sha) > 10 {
			sha = sha[:10]
		}
		return "Committed " + sha + " on " + s("branch")
	case "pr":
		return "Pull request #" + s("number") + " " + s("url")
	}
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return e.Type + " " + string(e.Data)
	}
	return e.Type
}

// eventJSON is what the timeline's script receives per event.
type eventJSON struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	Text string `json:"text"`
	At   string `json:"at"`
	// Settled tells the page to reload for the final state (files, PR).
	Settled bool `json:"settled,omitempty"`
}

// jobEvents streams a job's timeline as Server-Sent Events, from the id in
// Last-Event-ID (or lastEventId), until the job settles.
func (h *Handler) jobEvents(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	p, err := h.project(ctx, v, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	jobID := r.PathValue("id")
	if _, err := h.Jobs.Get(ctx, p.ID, jobID); err != nil {
		return err
	}
	idText := r.Header.Get("Last-Event-ID")
	if idText == "" {
		idText = r.URL.Query().Get("lastEventId")
	}
	var after int64
	if idText != "" {
		if after, err = strconv.ParseInt(idText, 10, 64); err != nil || after < 0 {
			return apperr.New(apperr.Invalid, "lastEventId %q is not an event id", idText)
		}
	}
	changed, stop := h.Jobs.Subscribe(jobID)
	defer stop()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	for {
		job, err := h.Jobs.Get(ctx, p.ID, jobID)
		if err != nil {
			return nil // the stream has begun: the client reconnects
		}
		done := settled(job)
		for {
			events, err := h.Jobs.Events(ctx, jobID, after, 100)
			if err != nil {
				return nil
			}
			for _, e := range events {
				b, _ := json.Marshal(eventJSON{ID: e.ID, Type: e.Type, Text: describeEvent(e), At: e.CreatedAt.UTC().Format(time.RFC3339)})
				if _, err := fmt.Fprintf(w, "id: %d\nevent: timeline\ndata: %s\n\n", e.ID, b); err != nil {
					return nil
				}
				after = e.ID
			}
			if len(events) < 100 {
				break
			}
		}
		if done {
			b, _ := json.Marshal(eventJSON{ID: after, Type: "settled", Text: "Job " + strings.ToLower(string(job.Status)), Settled: true})
			_, _ = fmt.Fprintf(w, "event: settled\ndata: %s\n\n", b)
			_ = rc.Flush()
			return nil
		}
		_ = rc.Flush()
		select {
		case <-ctx.Done():
			return nil
		case <-h.stopStreams:
			return nil // the server shuts down: the browser reconnects to another
		case <-changed:
		case <-time.After(h.EventPoll):
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			_ = rc.Flush()
		}
	}
}
