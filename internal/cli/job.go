package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// jobClient talks to a docsmith server's agent job API.
type jobClient struct {
	base    string // e.g. http://127.0.0.1:8080
	key     string
	project string
	http    *http.Client
}

// jobFlags are the client's connection flags, defaulting from the
// environment: DOCSMITH_URL, DOCSMITH_API_KEY, DOCSMITH_PROJECT.
func jobFlags(fs *flag.FlagSet, env Env) *jobClient {
	c := &jobClient{http: &http.Client{}}
	fs.StringVar(&c.base, "url", envOr(env, "DOCSMITH_URL", "http://127.0.0.1:8080"), "server address (env DOCSMITH_URL)")
	fs.StringVar(&c.key, "key", envOr(env, "DOCSMITH_API_KEY", ""), "admin key svc_... (env DOCSMITH_API_KEY)")
	fs.StringVar(&c.project, "project", envOr(env, "DOCSMITH_PROJECT", ""), "project id (env DOCSMITH_PROJECT)")
	return c
}

// envOr is the variable's value when set and not empty, else fallback: the
// client commands' flag defaults.
func envOr(env Env, name, fallback string) string {
	if v, ok := env.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

// unreachable is the error of a request that got no answer: it names the
// address tried and where it comes from, the usual thing to fix.
func unreachable(base string, err error) error {
	return fmt.Errorf("cannot reach docsmith at %s (set the server address with --url or DOCSMITH_URL): %w", base, err)
}

func (c *jobClient) check() error {
	if c.key == "" {
		return errors.New("an admin key is needed: --key or DOCSMITH_API_KEY")
	}
	if c.project == "" {
		return errors.New("a project is needed: --project or DOCSMITH_PROJECT")
	}
	return nil
}

func (c *jobClient) url(path string) string {
	return strings.TrimRight(c.base, "/") + "/v2/agent/" + url.PathEscape(c.project) + path
}

// do sends a request and decodes a JSON reply; an error reply becomes an
// error carrying the server's message.
func (c *jobClient) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	return c.send(ctx, method, c.url(path), rd, body != nil, out)
}

// doURL sends a GET-like request to a full URL and decodes the JSON reply.
func (c *jobClient) doURL(ctx context.Context, method, u string, out any) error {
	return c.send(ctx, method, u, nil, false, out)
}

func (c *jobClient) send(ctx context.Context, method, u string, rd io.Reader, hasBody bool, out any) error {
	_, err := c.sendStatus(ctx, method, u, rd, hasBody, out)
	return err
}

// sendStatus is send for a caller that tells successes apart by status.
func (c *jobClient) sendStatus(ctx context.Context, method, u string, rd io.Reader, hasBody bool, out any) (int, error) {
	path := u
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, unreachable(c.base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return resp.StatusCode, fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
		}
		return resp.StatusCode, fmt.Errorf("HTTP %d from %s %s", resp.StatusCode, method, path)
	}
	return resp.StatusCode, json.Unmarshal(data, out)
}

// clientJob is the part of the job object the CLI shows.
type clientJob struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Source struct {
		Repository string `json:"repository"`
		Ref        string `json:"ref"`
	} `json:"source"`
	PRLink    *string `json:"prLink"`
	Summary   *string `json:"summary"`
	Error     *string `json:"error"`
	CreatedAt string  `json:"createdAt"`
	Messages  []struct {
		Seq    int    `json:"seq"`
		Prompt string `json:"prompt"`
		Status string `json:"status"`
	} `json:"messages"`
}

func jobCommand(ctx context.Context, sub string, args []string, env Env) error {
	fs := newFlagSet("job "+sub, env)
	c := jobFlags(fs, env)
	var watch bool
	var status string
	var limit int
	switch sub {
	case "create":
		fs.BoolVar(&watch, "watch", false, "follow the job until it settles")
	case "list":
		fs.StringVar(&status, "status", "", "only jobs in this status")
		fs.IntVar(&limit, "limit", 20, "jobs to show (1-100)")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if err := c.check(); err != nil {
		return err
	}
	switch sub {
	case "create":
		if len(pos) != 1 {
			return errors.New(`usage: docsmith job create --project P "INSTRUCTION" [--watch]`)
		}
		var job clientJob
		if err := c.do(ctx, http.MethodPost, "/job", map[string]string{"prompt": pos[0]}, &job); err != nil {
			return err
		}
		if !watch {
			printJob(env.Stdout, job)
			return nil
		}
		fmt.Fprintf(env.Stdout, "job %s on branch %s\n", job.ID, job.Source.Ref)
		return c.watch(ctx, job.ID, env.Stdout)
	case "get", "watch":
		if len(pos) != 1 {
			return fmt.Errorf("usage: docsmith job %s --project P JOB_ID", sub)
		}
		if sub == "watch" {
			return c.watch(ctx, pos[0], env.Stdout)
		}
		var job clientJob
		if err := c.do(ctx, http.MethodGet, "/job/"+url.PathEscape(pos[0]), nil, &job); err != nil {
			return err
		}
		printJob(env.Stdout, job)
		return nil
	case "list":
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if status != "" {
			q.Set("status", status)
		}
		var page struct {
			Jobs []clientJob `json:"jobs"`
		}
		if err := c.do(ctx, http.MethodGet, "/jobs?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		return table(env.Stdout, []string{"JOB", "STATUS", "CREATED", "BRANCH", "PR"}, len(page.Jobs), func(i int) []string {
			j := page.Jobs[i]
			return []string{j.ID, j.Status, j.CreatedAt, j.Source.Ref, deref(j.PRLink, "-")}
		})
	}
	return fmt.Errorf("unknown job command %q", sub)
}

func deref(s *string, fallback string) string {
	if s == nil {
		return fallback
	}
	return *s
}

func printJob(w io.Writer, j clientJob) {
	fmt.Fprintf(w, "job      %s\nstatus   %s\nbranch   %s\npr       %s\n", j.ID, j.Status, j.Source.Ref, deref(j.PRLink, "-"))
	if j.Summary != nil {
		fmt.Fprintf(w, "summary  %s\n", *j.Summary)
	}
	if j.Error != nil {
		fmt.Fprintf(w, "error    %s\n", *j.Error)
	}
	for _, m := range j.Messages {
		fmt.Fprintf(w, "  #%d %-8s %s\n", m.Seq, m.Status, firstLineOf(m.Prompt))
	}
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > 80 {
		line = line[:77] + "..."
	}
	return line
}

// watch follows the job's event stream, printing one line per event, and
// reconnects with Last-Event-ID if the connection drops. It returns an
// error when the job ends failed.
func (c *jobClient) watch(ctx context.Context, jobID string, out io.Writer) error {
	var last string
	final := ""
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/job/"+url.PathEscape(jobID)+"/events"), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			if attempt < 5 && ctx.Err() == nil {
				time.Sleep(time.Second)
				continue
			}
			return fmt.Errorf("follow job %s: %w", jobID, unreachable(c.base, err))
		}
		if resp.StatusCode != http.StatusOK {
			_ = resp.Body.Close()
			var job clientJob
			return c.do(ctx, http.MethodGet, "/job/"+url.PathEscape(jobID), nil, &job) // reports the server's error
		}
		var id, typ string
		var at time.Time
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				at = time.Time{}
			case strings.HasPrefix(line, ": at "):
				// The event's own time; a job that finished long ago shows
				// when each step happened, not when it was read.
				at, _ = time.Parse(time.RFC3339Nano, strings.TrimPrefix(line, ": at "))
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if s := describeEvent(typ, []byte(strings.TrimPrefix(line, "data: "))); s != "" {
					when := at
					if when.IsZero() {
						when = time.Now() // a server that does not send the time
					}
					fmt.Fprintf(out, "%s  %s\n", when.Local().Format("15:04:05"), s)
				}
				if typ == "status" {
					var d struct {
						Status string `json:"status"`
					}
					_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d)
					final = d.Status
				}
				last = id
			}
		}
		_ = resp.Body.Close()
		if final != "" && final != "active" {
			if final == "failed" {
				return fmt.Errorf("job %s failed", jobID)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// describeEvent turns one event into a progress line.
func describeEvent(typ string, data []byte) string {
	var d map[string]any
	_ = json.Unmarshal(data, &d)
	str := func(k string) string { s, _ := d[k].(string); return s }
	num := func(k string) string {
		if f, ok := d[k].(float64); ok {
			return fmt.Sprint(int(f))
		}
		return "?"
	}
	switch typ {
	case "status":
		s := "status " + str("status")
		if v := str("prLink"); v != "" {
			s += "  " + v
		}
		if v := str("error"); v != "" {
			s += ": " + v
		}
		if v := str("summary"); v != "" && str("status") == "completed" {
			s += ": " + v
		}
		return s
	case "message.queued":
		return "message #" + num("seq") + " queued"
	case "turn.started":
		return "turn #" + num("seq") + " started (attempt " + num("attempt") + ")"
	case "turn.finished":
		return "turn #" + num("seq") + " " + str("state")
	case "checkout":
		return "checked out " + str("branch")
	case "tool":
		ok := "ok"
		if b, _ := d["ok"].(bool); !b {
			ok = "refused"
		}
		return "tool " + str("target") + " (" + ok + ")"
	case "validation":
		if b, _ := d["ok"].(bool); b {
			return "validation passed"
		}
		return "validation found " + num("problems") + " problem(s)"
	case "commit":
		sha := str("sha")
		if len(sha) > 8 {
			sha = sha[:8]
		}
		return "committed " + sha + " to " + str("branch")
	case "pr":
		return "pull request " + str("url")
	}
	return typ
}
