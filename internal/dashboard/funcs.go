package dashboard

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"
)

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"clock": func(t time.Time) string { return t.UTC().Format("15:04:05") },
	"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"whenPtr": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"pct": func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"bar": func(n, maxN int) int {
		if maxN == 0 {
			return 0
		}
		return max(2, 100*n/maxN)
	},
	"short": shortID,
	"path":  url.PathEscape,
	"join":  strings.Join,
	"first": func(s string, n int) string {
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return s
	},
	"reason": func(r string) string {
		switch r {
		case "not_covered":
			return "not covered"
		case "partial":
			return "partly covered"
		case "low_retrieval":
			return "weak match"
		case "downvoted":
			return "rated down"
		case "answered":
			return "answered"
		}
		return r
	},
	"list": func(s ...string) []string { return s },
	// gapState is a gap's lifecycle state in words.
	"gapState": func(s string) string {
		if s == "in_progress" {
			return "in progress"
		}
		return s
	},
	"deref": func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	},
	// commit is a commit id as people compare them: its first 12 digits.
	"commit": func(id string) string {
		if len(id) > 12 {
			return id[:12]
		}
		return id
	},
	"dur": func(d time.Duration) string {
		if d < time.Second {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(100 * time.Millisecond).String()
	},
	"secs": func(d time.Duration) string { return d.Round(time.Second).String() },
	"status": func(s string) string {
		if s == "partial" {
			return "partly covered"
		}
		return strings.ReplaceAll(s, "_", " ")
	},
	// Answer checks and their runs.
	"expects": expectations,
	"change":  changeWords,
	"trigger": triggerWords,
	"args":    func(v ...any) []any { return v },
}
