package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ask streams an assistant answer to the terminal: the text as it arrives,
// then the sources it cites and the thread id to continue with.
func ask(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("ask", env)
	base := fs.String("url", envOr(env, "DOCSMITH_URL", "http://127.0.0.1:8080"), "server address (env DOCSMITH_URL)")
	key := fs.String("key", envOr(env, "DOCSMITH_ASSISTANT_KEY", ""), "assistant key svc_dsc_... (env DOCSMITH_ASSISTANT_KEY)")
	domain := fs.String("domain", envOr(env, "DOCSMITH_DOMAIN", ""), "assistant domain (env DOCSMITH_DOMAIN)")
	thread := fs.String("thread", "", "continue this thread (the id a previous answer printed)")
	pageSize := fs.Int("passages", 5, "passages to retrieve (1-50)")
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) != 1 {
		return errors.New(`usage: docsmith ask --domain D [--thread ID] "QUESTION"`)
	}
	if *key == "" || *domain == "" {
		return errors.New("an assistant key and a domain are needed: --key and --domain, or DOCSMITH_ASSISTANT_KEY and DOCSMITH_DOMAIN")
	}
	body := map[string]any{
		"fp":                "anonymous",
		"retrievalPageSize": *pageSize,
		"messages":          []any{map[string]any{"id": "q1", "role": "user", "parts": []any{map[string]string{"type": "text", "text": pos[0]}}}},
	}
	if *thread != "" {
		body["threadId"] = *thread
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	endpoint := strings.TrimRight(*base, "/") + "/discovery/v2/assistant/" + url.PathEscape(*domain) + "/message"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return unreachable(*base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return fmt.Errorf("HTTP %d from the assistant", resp.StatusCode)
	}
	return printAnswer(resp.Body, env.Stdout, resp.Header.Get("X-Thread-Id"))
}

// printAnswer reads a UI message stream and writes the answer's text as it
// arrives, then the numbered sources and the thread id.
func printAnswer(r io.Reader, out io.Writer, threadID string) error {
	type source struct{ url, title string }
	var (
		sources []source
		status  answerStatus
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Type      string `json:"type"`
			Delta     string `json:"delta"`
			URL       string `json:"url"`
			Title     string `json:"title"`
			ErrorText string `json:"errorText"`
			// Data is a data part's: data-answer-status carries the
			// answer's status.
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			continue
		}
		switch chunk.Type {
		case "text-delta":
			fmt.Fprint(out, chunk.Delta)
		case "source-url":
			sources = append(sources, source{chunk.URL, chunk.Title})
		case "data-answer-status":
			_ = json.Unmarshal(chunk.Data, &status) // a status it cannot read is not printed
		case "error":
			return fmt.Errorf("the assistant stopped: %s", chunk.ErrorText)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	fmt.Fprintln(out)
	if len(sources) > 0 {
		fmt.Fprintln(out, "\nSources:")
		for i, s := range sources {
			fmt.Fprintf(out, "  [%d] %s  %s\n", i+1, s.title, s.url)
		}
	}
	if status.Status != "" {
		fmt.Fprintf(out, "\nstatus %s", strings.ReplaceAll(status.Status, "_", " "))
		if status.Note != "" {
			fmt.Fprintf(out, ": %s", status.Note)
		}
		fmt.Fprintln(out)
	}
	if threadID != "" {
		fmt.Fprintf(out, "\nthread %s  (continue with --thread %s)\n", threadID, threadID)
	}
	return nil
}

// answerStatus is the data of a data-answer-status part: whether the docs
// cover the question.
type answerStatus struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}
