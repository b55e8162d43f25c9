package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestGroupCommitDurableAfterKill: SQLite commits the writes of concurrent
// requests together (group commit), and PostgreSQL the job creates whose
// limit is not in the database. Many clients create jobs and send
// follow-ups while the process is SIGKILLed; after a restart every job and
// message whose request was answered (201, 200) is there, and nothing is
// there that was not sent. Where the database keeps the limits (SQLite,
// PostgreSQL alone), the agent limit counted exactly the requests stored:
// each is checked in the transaction that stores it. Redis counts a
// request before its write, so with Redis the limit counted at least the
// requests stored.
func TestGroupCommitDurableAfterKill(t *testing.T) {
	t.Parallel()
	t.Run("backend=sqlite", func(t *testing.T) {
		t.Parallel()
		dir, key := crashSetup(t)
		testGroupCommitDurableAfterKill(t, dir, key, nil, crashCheck{groupCommit: true, exactLimit: true})
	})
	t.Run("backend=postgres", func(t *testing.T) {
		t.Parallel()
		dbURL := storetest.PostgresURL(t)
		testGroupCommitDurableAfterKill(t, t.TempDir(), seedPostgres(t, dbURL), map[string]string{"DOCSMITH_DATABASE_URL": dbURL},
			crashCheck{exactLimit: true})
	})
	t.Run("backend=postgres+redis", func(t *testing.T) {
		t.Parallel()
		dbURL := storetest.PostgresURL(t)
		redisURL, _ := storetest.RedisURL(t)
		testGroupCommitDurableAfterKill(t, t.TempDir(), seedPostgres(t, dbURL), map[string]string{"DOCSMITH_DATABASE_URL": dbURL, "DOCSMITH_REDIS_URL": redisURL},
			crashCheck{groupCommit: true})
	})
}

// crashCheck says what a backend promises beyond durability: that writes
// were committed together, and that the limit counted exactly the requests
// stored.
type crashCheck struct {
	groupCommit, exactLimit bool
}

func testGroupCommitDurableAfterKill(t *testing.T, dir, key string, backend map[string]string, want crashCheck) {
	const limit = 1_000_000
	opts := map[string]string{"DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR": strconv.Itoa(limit), "DOCSMITH_LOG_LEVEL": "warn"}
	for k, v := range backend {
		opts[k] = v
	}
	child := crashStart(t, dir, crashModeComplete, opts)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	// send posts a body and returns the status and response; err when no
	// answer came (the process died first).
	send := func(base, path, prompt string, headers map[string]string) (int, http.Header, []byte, error) {
		body, _ := json.Marshal(map[string]string{"prompt": prompt})
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b, err
	}

	var mu sync.Mutex
	sent := map[string]bool{}      // every prompt sent
	acked := map[string][]string{} // job id -> prompts answered, in order
	ackedRequests := 0
	const clients = 32
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for n := 0; ; n++ {
				prompt := fmt.Sprintf("client %d create %d", c, n)
				headers := map[string]string{}
				if n%2 == 1 {
					headers["Idempotency-Key"] = fmt.Sprintf("c%d-n%d", c, n)
				}
				mu.Lock()
				sent[prompt] = true
				mu.Unlock()
				status, _, body, err := send(child.base, "/v2/agent/"+crashProject+"/job", prompt, headers)
				if err != nil {
					return // the process is gone
				}
				if status != http.StatusCreated {
					t.Errorf("create: status %d: %s", status, body)
					return
				}
				var j crashJob
				if err := json.Unmarshal(body, &j); err != nil || j.ID == "" {
					t.Errorf("create answered %s: %v", body, err)
					return
				}
				mu.Lock()
				acked[j.ID] = []string{prompt}
				ackedRequests++
				follow := fmt.Sprintf("client %d follow-up %d", c, n)
				sent[follow] = true
				mu.Unlock()
				status, _, body, err = send(child.base, "/v2/agent/"+crashProject+"/job/"+j.ID+"/message", follow, nil)
				if err != nil {
					return
				}
				if status != http.StatusOK {
					t.Errorf("follow-up: status %d: %s", status, body)
					return
				}
				mu.Lock()
				acked[j.ID] = append(acked[j.ID], follow)
				ackedRequests++
				mu.Unlock()
			}
		})
	}
	crashWait(t, 60*time.Second, "600 requests answered", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return ackedRequests >= 600, fmt.Sprintf("%d answered", ackedRequests)
	})
	stats := writeStats(t, client, child.base)
	child.kill()
	wg.Wait()
	if t.Failed() {
		return
	}
	if want.groupCommit && stats["transactions"] <= stats["commits"] {
		t.Errorf("before the kill: %v transactions in %v commits; the writes were not committed together", stats["transactions"], stats["commits"])
	}
	t.Logf("killed after %d answered requests (%v writes in %v group commits)", ackedRequests, stats["transactions"], stats["commits"])

	restarted := crashStart(t, dir, crashModeBlock, opts)
	api := &crashAPI{t: t, key: key, client: client, base: restarted.base}
	for id, prompts := range acked {
		j := api.get(id)
		var got []string
		for _, m := range j.Messages {
			got = append(got, m.Prompt)
		}
		if len(got) < len(prompts) || strings.Join(got[:len(prompts)], "|") != strings.Join(prompts, "|") {
			t.Errorf("job %s after the kill has %q, want it to begin with the answered %q", id, got, prompts)
		}
	}

	// Nothing is stored that was not sent, and the limit counted each
	// stored request once: the next create has exactly the rest left.
	stored := 0
	cursor := ""
	for {
		var page struct {
			Jobs       []crashJob `json:"jobs"`
			NextCursor *string    `json:"nextCursor"`
		}
		api.do(http.MethodGet, "/v2/agent/"+crashProject+"/jobs?limit=100"+cursor, nil, http.StatusOK, &page)
		for _, j := range page.Jobs {
			for _, m := range j.Messages {
				if !sent[m.Prompt] {
					t.Errorf("job %s holds %q, which no request sent", j.ID, m.Prompt)
				}
				stored++
			}
		}
		if page.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *page.NextCursor
	}
	if stored < ackedRequests {
		t.Errorf("%d requests stored, fewer than the %d answered", stored, ackedRequests)
	}
	status, h, body, err := send(restarted.base, "/v2/agent/"+crashProject+"/job", "after the restart", nil)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create after the restart: %d %s %v", status, body, err)
	}
	remaining, err := strconv.Atoi(h.Get("RateLimit-Remaining"))
	switch {
	case err != nil:
		t.Errorf("RateLimit-Remaining after the restart = %q, want a number", h.Get("RateLimit-Remaining"))
	case want.exactLimit && remaining != limit-stored-1:
		t.Errorf("RateLimit-Remaining after the restart = %d, want %d: %d requests are stored, the limit counted another number", remaining, limit-stored-1, stored)
	case remaining > limit-stored-1 || remaining < limit-len(sent)-1:
		t.Errorf("RateLimit-Remaining after the restart = %d, want between %d and %d: %d requests are stored and %d were sent", remaining, limit-len(sent)-1, limit-stored-1, stored, len(sent))
	}
}

// writeStats reads the group commit's counters from /metrics: the SQLite
// writer's transactions and commits, or PostgreSQL's job creates and the
// statements that stored them.
func writeStats(t *testing.T, client *http.Client, base string) map[string]float64 {
	t.Helper()
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "docsmith_sqlite_write_transactions_total", "docsmith_postgres_job_creates_total":
			out["transactions"], _ = strconv.ParseFloat(value, 64)
		case "docsmith_sqlite_write_commits_total", "docsmith_postgres_job_create_statements_total":
			out["commits"], _ = strconv.ParseFloat(value, 64)
		}
	}
	if len(out) != 2 {
		t.Fatalf("/metrics lacks the group commit's counters: %v", out)
	}
	return out
}
