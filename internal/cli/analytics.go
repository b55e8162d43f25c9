package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/analytics"
)

// analyticsCommand runs 'docsmith analytics stats|conversations|gaps|feedback':
// a domain's analytics over HTTP, as a table, JSON or CSV.
func analyticsCommand(ctx context.Context, sub string, args []string, env Env) error {
	fs := newFlagSet("analytics "+sub, env)
	c := jobFlags(fs, env)
	var domain, from, to, format, status, feedback, rating, source string
	var limit int
	fs.StringVar(&domain, "domain", envOr(env, "DOCSMITH_DOMAIN", ""), "assistant domain (env DOCSMITH_DOMAIN)")
	fs.StringVar(&from, "from", "", "start of the range: 2026-03-01 or an RFC 3339 time")
	fs.StringVar(&to, "to", "", "end of the range; a date includes that day")
	fs.StringVar(&format, "format", "table", "table, json or csv")
	fs.IntVar(&limit, "limit", 0, "at most this many rows (0: all)")
	switch sub {
	case "conversations":
		fs.StringVar(&status, "status", "", "answered, partial or not_covered")
		fs.StringVar(&feedback, "feedback", "", "up, down or none")
	case "feedback":
		fs.StringVar(&rating, "rating", "", "up or down")
		fs.StringVar(&status, "status", "", "answered, partial or not_covered (ratings of answers only)")
		fs.StringVar(&source, "source", "", "assistant (readers' ratings of answers) or mcp (agents' ratings of pages)")
	}
	if _, err := parse(fs, args); err != nil {
		return usageErr(err)
	}
	if c.key == "" {
		return errors.New("an admin key is needed: --key or DOCSMITH_API_KEY")
	}
	if err := required("domain", domain); err != nil {
		return err
	}
	switch format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("--format %q must be table, json or csv", format)
	}
	q := url.Values{}
	for k, v := range map[string]string{"from": from, "to": to, "status": status, "feedback": feedback, "rating": rating, "source": source} {
		if v != "" {
			q.Set(k, v)
		}
	}
	a := analyticsClient{c: c, domain: domain}
	switch sub {
	case "stats":
		var in struct {
			Questions       int     `json:"questions"`
			NotCovered      int     `json:"notCovered"`
			NotCoveredShare float64 `json:"notCoveredShare"`
			FeedbackUp      int     `json:"feedbackUp"`
			FeedbackDown    int     `json:"feedbackDown"`
			PerDay          []struct {
				Day        string `json:"day"`
				Questions  int    `json:"questions"`
				NotCovered int    `json:"notCovered"`
			} `json:"perDay"`
			TopPages     []countRow `json:"topPages"`
			TopQuestions []countRow `json:"topQuestions"`
		}
		raw, err := a.get(ctx, "insights", q, &in)
		if err != nil {
			return err
		}
		switch format {
		case "json":
			return writeIndented(env.Stdout, raw)
		case "csv":
			rows := [][]string{{"day", "questions", "not_covered"}}
			for _, d := range in.PerDay {
				rows = append(rows, []string{d.Day, strconv.Itoa(d.Questions), strconv.Itoa(d.NotCovered)})
			}
			return analytics.WriteCSV(env.Stdout, rows)
		}
		fmt.Fprintf(env.Stdout, "questions     %d\nnot covered   %d (%.1f%%)\nfeedback      %d up, %d down\n\n",
			in.Questions, in.NotCovered, 100*in.NotCoveredShare, in.FeedbackUp, in.FeedbackDown)
		if err := table(env.Stdout, []string{"DAY", "QUESTIONS", "NOT COVERED"}, len(in.PerDay), func(i int) []string {
			d := in.PerDay[i]
			return []string{d.Day, strconv.Itoa(d.Questions), strconv.Itoa(d.NotCovered)}
		}); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout)
		if err := table(env.Stdout, []string{"TOP PAGE", "CITED"}, len(in.TopPages), func(i int) []string {
			return []string{in.TopPages[i].Value, strconv.Itoa(in.TopPages[i].Count)}
		}); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout)
		return table(env.Stdout, []string{"TOP QUESTION", "ASKED"}, len(in.TopQuestions), func(i int) []string {
			return []string{oneLine(in.TopQuestions[i].Value, 80), strconv.Itoa(in.TopQuestions[i].Count)}
		})
	case "conversations":
		header := []string{"thread_id", "created_at", "status", "feedback", "turns", "first_question", "pages"}
		return a.list(ctx, "conversations", "conversations", q, limit, format, env.Stdout, header, func(m map[string]any) []string {
			return []string{str(m["threadId"]), str(m["createdAt"]), str(m["status"]), str(m["feedback"]), str(m["turns"]), str(m["firstQuestion"]), strs(m["pages"])}
		})
	case "gaps":
		header := []string{"key", "count", "not_covered", "low_retrieval", "downvoted", "top_page", "last_asked", "example", "jobs"}
		return a.list(ctx, "gaps", "gaps", q, limit, format, env.Stdout, header, func(m map[string]any) []string {
			example := ""
			if qs, ok := m["questions"].([]any); ok && len(qs) > 0 {
				if q0, ok := qs[0].(map[string]any); ok {
					example = str(q0["question"])
				}
			}
			var jobs []string
			if js, ok := m["jobs"].([]any); ok {
				for _, j := range js {
					if jm, ok := j.(map[string]any); ok {
						jobs = append(jobs, str(jm["jobId"])+" "+str(jm["status"]))
					}
				}
			}
			return []string{str(m["key"]), str(m["count"]), str(m["notCovered"]), str(m["lowRetrieval"]), str(m["downvoted"]), str(m["topPage"]), str(m["lastAsked"]), example, strings.Join(jobs, "; ")}
		})
	case "feedback":
		header := []string{"source", "thread_id", "seq", "rating", "asked_at", "question", "comment", "pages"}
		return a.list(ctx, "feedback", "feedback", q, limit, format, env.Stdout, header, func(m map[string]any) []string {
			seq := str(m["seq"])
			if str(m["threadId"]) == "" {
				seq = "" // a page's rating has no turn
			}
			return []string{str(m["source"]), str(m["threadId"]), seq, str(m["rating"]), str(m["askedAt"]), str(m["question"]), str(m["comment"]), strs(m["pages"])}
		})
	}
	return fmt.Errorf("unknown analytics command %q", sub)
}

type countRow struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

type analyticsClient struct {
	c      *jobClient
	domain string
}

func (a analyticsClient) get(ctx context.Context, what string, q url.Values, out any) (json.RawMessage, error) {
	var raw json.RawMessage
	path := "/v2/analytics/" + url.PathEscape(a.domain) + "/" + what
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if err := a.c.doURL(ctx, "GET", strings.TrimRight(a.c.base, "/")+path, &raw); err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("read the %s reply: %w", what, err)
		}
	}
	return raw, nil
}

// list follows the pages of a list endpoint and prints its rows.
func (a analyticsClient) list(ctx context.Context, what, field string, q url.Values, limit int, format string, w io.Writer, header []string, row func(map[string]any) []string) error {
	var items []map[string]any
	q.Set("limit", "500")
	for {
		var page map[string]json.RawMessage
		if _, err := a.get(ctx, what, q, &page); err != nil {
			return err
		}
		var batch []map[string]any
		if err := json.Unmarshal(page[field], &batch); err != nil {
			return fmt.Errorf("read the %s reply: %w", what, err)
		}
		items = append(items, batch...)
		var next *string
		_ = json.Unmarshal(page["nextCursor"], &next)
		if next == nil || (limit > 0 && len(items) >= limit) {
			break
		}
		q.Set("cursor", *next)
	}
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	switch format {
	case "json":
		if items == nil {
			items = []map[string]any{}
		}
		b, err := json.MarshalIndent(items, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "csv":
		rows := [][]string{header}
		for _, it := range items {
			rows = append(rows, row(it))
		}
		return analytics.WriteCSV(w, rows)
	}
	upper := make([]string, len(header))
	for i, h := range header {
		upper[i] = strings.ToUpper(strings.ReplaceAll(h, "_", " "))
	}
	return table(w, upper, len(items), func(i int) []string {
		r := row(items[i])
		for j := range r {
			r[j] = oneLine(r[j], 60)
		}
		return r
	})
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func strs(v any) string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return strings.Join(out, " ")
}

// oneLine fits text on one table line: spaces folded, cut at n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func writeIndented(w io.Writer, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
