package app_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// BenchmarkAssistantStreams measures the assistant under 100 concurrent v2
// streams against a large docs site: time to the first byte of each stream,
// time to its end, and answers per second. The model is a local server
// speaking the OpenAI streaming protocol that answers at once, so the
// figures are docsmith's own cost (retrieval, prompt, stream, threads).
// DOCSMITH_BENCH_MODEL=extractive measures the answer without a model, as
// make bench-compare does, and DOCSMITH_BENCH_QUESTION asks that one
// question instead of the five below (which are about the mintlify site).
//
//	DOCSMITH_BENCH_SITE=DIR go test ./internal/app -run '^$' -bench AssistantStreams -benchtime 1000x
func BenchmarkAssistantStreams(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	model := llmtest.NewOpenAIServer(b, llmtest.Forever(llmtest.Text("The answer is in the docs [1]", ", as the cited page says.")))
	dir := b.TempDir()
	cliRun := func(args ...string) string {
		b.Helper()
		var out, errOut bytes.Buffer
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) { return dir, k == "DOCSMITH_DATA_DIR" }}
		if code := cli.Run(context.Background(), args, env); code != 0 {
			b.Fatalf("docsmith %s: %s", strings.Join(args, " "), errOut.String())
		}
		return out.String()
	}
	cliRun("org", "create", "acme")
	cliRun("project", "create", "--org", "acme", "--id", "site", "--repo", site)
	modelName := cmp.Or(os.Getenv("DOCSMITH_BENCH_MODEL"), "openai/bench")
	cliRun("domain", "create", "--org", "acme", "--domain", "site", "--project", "site", "--model", modelName, "--index=false") // indexed below, timed
	key := strings.TrimSpace(cliRun("key", "create", "--org", "acme", "--kind", "assistant"))
	start := time.Now()
	cliRun("index", "site")
	b.Logf("index built in %s", time.Since(start).Round(time.Millisecond))

	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_OPENAI_BASE_URL": model.URL, "DOCSMITH_OPENAI_API_KEY": "bench",
		"DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_ORG_HOUR": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY": "0",
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST": "0",
	}
	cfg, err := config.Bind(flag.NewFlagSet("bench", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		b.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler)}
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	url := "http://" + m.Addr() + "/discovery/v2/assistant/site/message"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	questions := []string{"How do I add a custom domain?", "Where do I configure navigation tabs?", "How can I hide a page from search?", "What does the API playground do?", "How do I install the CLI?"}
	if q := os.Getenv("DOCSMITH_BENCH_QUESTION"); q != "" {
		questions = []string{q}
	}

	const streams = 100
	var mu sync.Mutex
	var firstByte, whole []time.Duration
	b.ResetTimer()
	cpu0 := processCPU(b)
	begin := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range streams {
		wg.Go(func() {
			for i := range next {
				body := fmt.Sprintf(`{"fp":"anonymous","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":%q}]}]}`, questions[i%len(questions)])
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				r := bufio.NewReader(resp.Body)
				_, err = r.ReadByte()
				t1 := time.Now()
				sawFinish := false
				for err == nil {
					var line string
					line, err = r.ReadString('\n')
					sawFinish = sawFinish || strings.Contains(line, `"type":"finish"`)
				}
				t2 := time.Now()
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !sawFinish {
					b.Errorf("status %d, finish seen %v", resp.StatusCode, sawFinish)
					return
				}
				mu.Lock()
				firstByte, whole = append(firstByte, t1.Sub(t0)), append(whole, t2.Sub(t0))
				mu.Unlock()
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(begin)
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(whole))/elapsed.Seconds(), "answers/s")
	// The process's CPU includes the clients' (and the model server's),
	// which do the same work whatever the server does.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(max(len(whole), 1)), "cpu-ms/answer")
	b.ReportMetric(pct(firstByte, 0.5), "ttfb-p50-ms")
	b.ReportMetric(pct(firstByte, 0.99), "ttfb-p99-ms")
	b.ReportMetric(pct(whole, 0.5), "answer-p50-ms")
	b.ReportMetric(pct(whole, 0.99), "answer-p99-ms")
}
