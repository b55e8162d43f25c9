package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

const eventBatch = 100

// jobEvents streams a job's events as Server-Sent Events. Each event has
// its store id, so a client that reconnects with Last-Event-ID misses
// nothing. The stream ends once the job has settled (it is not active) and
// every event has been sent; it also ends when the server shuts down.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	jobID := r.PathValue("id")
	if _, err := s.Jobs.Get(r.Context(), project.ID, jobID); err != nil {
		return err
	}
	after, err := lastEventID(r)
	if err != nil {
		return err
	}
	changed, stop := s.Jobs.Subscribe(jobID)
	defer stop()

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, ": stream of job ", jobID, "\n\n"); err != nil {
		return nil
	}
	_ = rc.Flush()

	ctx := r.Context()
	heartbeat := time.NewTicker(s.EventHeartbeat)
	defer heartbeat.Stop()
	for {
		// Read the status before the events: if the job had settled, every
		// event it will have is already stored.
		job, err := s.Jobs.Get(ctx, project.ID, jobID)
		if err != nil {
			return err
		}
		for {
			events, err := s.Jobs.Events(ctx, jobID, after, eventBatch)
			if err != nil {
				return err
			}
			for _, e := range events {
				// The comment carries the time the event was recorded, for
				// clients that show it (SSE has no field for it; others skip it).
				if _, err := fmt.Fprintf(w, ": at %s\nid: %d\nevent: %s\ndata: %s\n\n", formatTime(e.CreatedAt), e.ID, e.Type, e.Data); err != nil {
					return nil // the client went away
				}
				after = e.ID
			}
			_ = rc.Flush()
			if len(events) < eventBatch {
				break
			}
		}
		if settled(job) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.stopEvents:
			return nil
		case <-changed:
		case <-time.After(s.EventPoll):
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			_ = rc.Flush()
		}
	}
}

// settled reports whether a job will write no more events unless a caller
// acts: it is not active and no turn is still winding down (a canceled turn
// writes its turn.finished after the job's status changed).
func settled(j agentjob.Job) bool {
	if j.Status == agentjob.Active {
		return false
	}
	for _, m := range j.Messages {
		if m.State == agentjob.TurnRunning {
			return false
		}
	}
	return true
}

func lastEventID(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return 0, apperr.New(apperr.Invalid, "Last-Event-ID %q must be the id of an event this stream sent", v)
	}
	return id, nil
}
