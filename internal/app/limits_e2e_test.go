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

// TestConcurrentRetriesCountOnce sends one create, and then one follow-up,
// with one Idempotency-Key each, many times at once: every attempt gets the
// same job, and the project's hourly limit counts each request once.
func TestConcurrentRetriesCountOnce(t *testing.T) {
	t.Parallel()
	s := setup(t, "DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR=3")

	created := s.concurrentPosts(t, jobsPath(projA), "write the changelog", "same-create", http.StatusCreated)
	s.concurrentPosts(t, actionPath(projA, created, "message"), "and the release notes", "same-message", http.StatusOK)
	job := decode[struct {
		Messages []struct {
			Prompt string `json:"prompt"`
		} `json:"messages"`
	}](t, s.get(jobPath(projA, created), s.adminA))
	if len(job.Messages) != 2 {
		t.Fatalf("the job holds %d messages after one create and one follow-up, each sent 12 times: %+v", len(job.Messages), job.Messages)
	}
	// Counted once each: one more request fits the limit of three, then none.
	expectStatus(t, s.post(jobsPath(projA), s.adminA, prompt("write the changelog"), "Idempotency-Key", "another-request"), http.StatusCreated)
	r := s.post(jobsPath(projA), s.adminA, prompt("and the upgrade guide"))
	expectError(t, "fourth request of the hour", r, http.StatusTooManyRequests, "per project")
}

// concurrentPosts sends the same prompt with the same Idempotency-Key to
// path twelve times at once, checks that every attempt got want and the
// same job, and returns the job's id.
func (s *server) concurrentPosts(t *testing.T, path, text, key string, want int) string {
	t.Helper()
	const retries = 12
	body, err := json.Marshal(prompt(text))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		id  string
		err error
	}
	results := make([]result, retries)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range retries {
		wg.Go(func() {
			<-start
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+path, bytes.NewReader(body))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+s.adminA)
			req.Header.Set("Idempotency-Key", key)
			resp, err := s.client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				results[i].err = err
				return
			}
			if resp.StatusCode != want {
				results[i].err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
				return
			}
			var j struct {
				ID string `json:"id"`
			}
			results[i] = result{err: json.Unmarshal(b, &j), id: j.ID}
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("%s attempt %d: %v", path, i, r.err)
		}
		ids[r.id] = true
	}
	if len(ids) != 1 {
		t.Fatalf("%d concurrent attempts at %s answered with %d jobs, want 1: %v", retries, path, len(ids), ids)
	}
	for id := range ids {
		return id
	}
	return ""
}
