package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/docsmith/docsmith/internal/workflow"
)

// clientWorkflows is the workflow listing as the API sends it.
type clientWorkflows struct {
	BaseSHA   *string `json:"baseSha"`
	SyncedAt  *string `json:"syncedAt"`
	Workflows []struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Trigger struct {
			Cron string              `json:"cron"`
			Push []clientPushTrigger `json:"push"`
		} `json:"trigger"`
		Automerge   bool    `json:"automerge"`
		LastRunSlot *string `json:"lastRunSlot"`
		NextRun     *string `json:"nextRun"`
		Refused     *string `json:"refused"`
	} `json:"workflows"`
	Problems []struct {
		File    string  `json:"file"`
		Line    *int    `json:"line"`
		Key     *string `json:"key"`
		Message string  `json:"message"`
	} `json:"problems"`
}

type clientPushTrigger struct {
	Repo   string  `json:"repo"`
	Branch *string `json:"branch"`
}

// workflowCommand runs 'docsmith workflow list|sync|run': a project's
// workflows over the HTTP API, with the job commands' connection flags.
func workflowCommand(ctx context.Context, sub string, args []string, env Env) error {
	fs := newFlagSet("workflow "+sub, env)
	c := jobFlags(fs, env)
	var watch bool
	if sub == "run" {
		fs.BoolVar(&watch, "watch", false, "follow the run's job until it settles")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	switch sub {
	case "list":
		if len(pos) != 0 {
			return errors.New("usage: docsmith workflow list --project P")
		}
		if err := c.check(); err != nil {
			return err
		}
		var l clientWorkflows
		if err := c.do(ctx, http.MethodGet, "/workflows", nil, &l); err != nil {
			return err
		}
		return printWorkflows(env, c.project, l)
	case "sync":
		if len(pos) > 1 {
			return errors.New("usage: docsmith workflow sync [PROJECT] (or --project P, DOCSMITH_PROJECT)")
		}
		if len(pos) == 1 {
			if flagGiven(fs, "project") && c.project != pos[0] {
				return fmt.Errorf("two projects given: %s and --project %s; name one", pos[0], c.project)
			}
			c.project = pos[0]
		}
		if err := c.check(); err != nil {
			return err
		}
		var l clientWorkflows
		if err := c.do(ctx, http.MethodPost, "/workflows/sync", nil, &l); err != nil {
			return err
		}
		return printWorkflows(env, c.project, l)
	case "run":
		if len(pos) != 1 {
			return errors.New("usage: docsmith workflow run --project P NAME [--watch]")
		}
		if err := c.check(); err != nil {
			return err
		}
		var job clientJob
		status, err := c.sendStatus(ctx, http.MethodPost, c.url("/workflows/"+url.PathEscape(pos[0])+"/run"), nil, false, &job)
		if err != nil {
			return err
		}
		if status == http.StatusCreated {
			fmt.Fprintf(env.Stdout, "workflow %s started job %s on branch %s\n", pos[0], job.ID, job.Source.Ref)
		} else {
			// The CLI sends no Idempotency-Key, so a 200 is a run queued
			// on the workflow's run that is still active.
			fmt.Fprintf(env.Stdout, "workflow %s is still running as job %s: this run was queued on it as message #%d\n", pos[0], job.ID, len(job.Messages))
		}
		if !watch {
			printJob(env.Stdout, job)
			return nil
		}
		return c.watch(ctx, job.ID, env.Stdout)
	}
	return fmt.Errorf("unknown workflow command %q", sub)
}

// flagGiven reports whether the flag was set on the command line (not
// from its default, which may come from the environment).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// printWorkflows writes the listing as a table like 'job list', then when
// and where it was read and the files left out.
func printWorkflows(env Env, project string, l clientWorkflows) error {
	err := table(env.Stdout, []string{"WORKFLOW", "NAME", "TRIGGER", "NEXT RUN", "LAST RUN", "AUTOMERGE", "STATUS"}, len(l.Workflows), func(i int) []string {
		w := l.Workflows[i]
		status := "ok"
		if w.Refused != nil {
			status = "refused: " + *w.Refused
		}
		return []string{w.ID, w.Name, describeTrigger(w.Trigger.Cron, w.Trigger.Push), deref(w.NextRun, "-"), deref(w.LastRunSlot, "-"), yesNo(w.Automerge), status}
	})
	if err != nil {
		return err
	}
	if l.SyncedAt == nil || l.BaseSHA == nil {
		fmt.Fprintf(env.Stderr, "the workflows of project %s have not been read yet; run: docsmith workflow sync %s\n", project, project)
		return nil
	}
	fmt.Fprintf(env.Stdout, "\nread at %.12s on %s\n", *l.BaseSHA, *l.SyncedAt)
	if len(l.Problems) > 0 {
		fmt.Fprintf(env.Stdout, "left out (fix these files and sync again):\n")
		for _, p := range l.Problems {
			wp := workflow.Problem{File: p.File, Msg: p.Message}
			if p.Line != nil {
				wp.Line = *p.Line
			}
			if p.Key != nil {
				wp.Key = *p.Key
			}
			fmt.Fprintf(env.Stdout, "  %s\n", wp.Error())
		}
	}
	return nil
}

// describeTrigger is a workflow's trigger in one cell: "cron 0 9 * * 1"
// or "push acme/api@main, acme/sdk" (no branch: the default branch).
func describeTrigger(cron string, push []clientPushTrigger) string {
	if cron != "" {
		return "cron " + cron
	}
	repos := make([]string, len(push))
	for i, p := range push {
		repos[i] = p.Repo
		if p.Branch != nil {
			repos[i] += "@" + *p.Branch
		}
	}
	return "push " + strings.Join(repos, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
