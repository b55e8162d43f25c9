package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// TestThousandAssistantStreamsStoreEveryTurn: 1,000 assistant streams at
// once against one SQLite process on loopback; every turn a reader got an
// answer for is in its thread afterwards, and /metrics counts no lost
// turn. Each stream is bounded by a deadline, so the test stops by itself.
func TestThousandAssistantStreamsStoreEveryTurn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a load test: 1,000 concurrent streams")
	}
	s := assistantSetup(t,
		"DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH=0", "DOCSMITH_LIMIT_ASSISTANT_PER_ORG_HOUR=0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY=0",
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE=0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST=0",
		"DOCSMITH_LOG_LEVEL=warn")
	const streams = 1000
	transport := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	questions := []string{"How do I exclude files from a sync?", "How do I install tern?", "What does the config file hold?"}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	answered := map[string]int{} // thread -> answered turns
	var failures []string
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			<-start
			thread, err := askOnce(ctx, client, s.base, s.assistantA, questions[i%len(questions)])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err.Error())
				return
			}
			answered[thread]++
		})
	}
	begin := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d streams answered in %s (%d failed)", len(answered), time.Since(begin).Round(time.Millisecond), len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d streams failed; first: %s", len(failures), streams, failures[0])
	}

	metrics := s.get("/metrics", "")
	if lost := metricValue(string(metrics.body), "docsmith_assistant_turns_lost_total"); lost != "0" {
		t.Errorf("docsmith_assistant_turns_lost_total = %s, want 0", lost)
	}
	// Shutdown flushes whatever is still queued.
	m := s.main
	s.main = nil
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	missing := 0
	for thread, n := range answered {
		turns, err := store.RecentTurns(t.Context(), thread, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) != n {
			missing += n - len(turns)
		}
	}
	if missing > 0 || strings.Contains(s.logs.String(), "store assistant turn") {
		t.Errorf("%d of %d answered turns are not stored", missing, len(answered))
	}
}

// askOnce asks one question on the v2 stream and reads it to the end; it
// returns the thread, or why the answer did not arrive whole.
func askOnce(ctx context.Context, client *http.Client, base, key, question string) (string, error) {
	body, _ := json.Marshal(askBody(question, ""))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/discovery/v2/assistant/tern/message", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	finished := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		finished = finished || strings.Contains(sc.Text(), `"type":"finish"`)
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if !finished {
		return "", fmt.Errorf("the stream of thread %s ended without its finish", resp.Header.Get("X-Thread-Id"))
	}
	return resp.Header.Get("X-Thread-Id"), nil
}

// metricValue is a metric's value in the Prometheus text format, or "".
func metricValue(text, name string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}
