package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentRetriesCountOnce sends one create, with one Idempotency-Key,
// many times at once: every attempt gets the same job, and the project's
// hourly limit counts it once.
func TestConcurrentRetriesCountOnce(t *testing.T) {
	t.Parallel()
	s := setup(t, "DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR=2")

	const retries = 12
	body, err := json.Marshal(prompt("write the changelog"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		status int
		id     string
		err    error
	}
	results := make([]result, retries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range retries {
		wg.Go(func() {
			<-start
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+jobsPath(projA), bytes.NewReader(body))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+s.adminA)
			req.Header.Set("Idempotency-Key", "same-request")
			resp, err := s.client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			var j struct {
				ID string `json:"id"`
			}
			if err == nil && resp.StatusCode == http.StatusCreated {
				err = json.Unmarshal(b, &j)
			}
			results[i] = result{status: resp.StatusCode, id: j.ID, err: err}
			if resp.StatusCode != http.StatusCreated {
				results[i].err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("attempt %d: %v", i, r.err)
		}
		ids[r.id] = true
	}
	if len(ids) != 1 {
		t.Fatalf("%d concurrent attempts made %d jobs, want 1: %v", retries, len(ids), ids)
	}
	// Counted once: one more request fits the limit of two, then none.
	expectStatus(t, s.post(jobsPath(projA), s.adminA, prompt("write the changelog"), "Idempotency-Key", "another-request"), http.StatusCreated)
	r := s.post(jobsPath(projA), s.adminA, prompt("and the release notes"))
	expectError(t, "third request of the hour", r, http.StatusTooManyRequests, "per project")
}
