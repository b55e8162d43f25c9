package cli

import (
	"context"
	"fmt"
	"math"
	"text/tabwriter"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/freshness"
)

// domainStatus runs `docsmith domain status DOMAIN`: what GET
// /v2/domains/{domain} shows of the domain's index, read from the store.
func domainStatus(ctx context.Context, args []string, env Env) error {
	return withBackend(ctx, "domain status", args, env, nil, func(_ config.Config, b *app.Backend, pos []string) error {
		if len(pos) != 1 {
			return usageErr(fmt.Errorf("domain status takes one domain: docsmith domain status DOMAIN"))
		}
		d, err := b.Tenants.GetDomain(ctx, pos[0])
		if err != nil {
			return err
		}
		p, err := b.Tenants.GetProject(ctx, d.ProjectID)
		if err != nil {
			return err
		}
		st, err := b.IndexStates.IndexState(ctx, d.ID)
		if err != nil {
			return err
		}
		printIndexStatus(env, d.ID, p.ID, freshness.RefOf(d, p), st, time.Now())
		return nil
	})
}

func printIndexStatus(env Env, domain, project, ref string, st freshness.State, now time.Time) {
	orNone := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339) + " (" + roundAgo(now.Sub(t)) + ")"
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "domain:\t%s\n", domain)
	fmt.Fprintf(w, "project:\t%s\n", project)
	fmt.Fprintf(w, "ref:\t%s\n", ref)
	fmt.Fprintf(w, "commit:\t%s\n", orNone(st.Commit))
	fmt.Fprintf(w, "indexed at:\t%s\n", at(st.IndexedAt))
	fmt.Fprintf(w, "head:\t%s\n", orNone(st.Head))
	fmt.Fprintf(w, "head seen at:\t%s\n", at(st.HeadSeenAt))
	fmt.Fprintf(w, "pages:\t%d\n", st.Pages)
	fmt.Fprintf(w, "passages:\t%d\n", st.Passages)
	fmt.Fprintf(w, "last build took:\t%s\n", st.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "last error:\t%s\n", orNone(st.LastError))
	fmt.Fprintf(w, "last error at:\t%s\n", at(st.LastErrorAt))
	fmt.Fprintf(w, "lag:\t%ds\n", int64(math.Ceil(st.Lag(now).Seconds())))
	_ = w.Flush()
}

// roundAgo is a duration as a person reads an age.
func roundAgo(d time.Duration) string {
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return d.Round(time.Second).String() + " ago"
	case d < time.Hour:
		return d.Round(time.Minute).String() + " ago"
	}
	return d.Round(time.Hour).String() + " ago"
}
