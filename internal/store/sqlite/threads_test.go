package sqlite_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

func TestThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(s.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: at}))
	check(s.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "x", BaseRef: "main", ForgeKind: "local", DocsRoot: ".", Model: "builtin", CreatedAt: at}))
	check(s.CreateDomain(ctx, tenant.Domain{ID: "site", OrgID: "acme", ProjectID: "docs", Ref: "main", Model: "extractive", CreatedAt: at}))

	th := assistant.Thread{ID: "thr_1", Domain: "site", OrgID: "acme", FP: "anonymous", CreatedAt: at, UpdatedAt: at}
	check(s.CreateThread(ctx, th))
	if err := s.CreateThread(ctx, th); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("duplicate thread: %v", err)
	}
	if _, err := s.GetThread(ctx, "thr_none"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("unknown thread: %v", err)
	}
	if _, err := s.AddTurn(ctx, assistant.Turn{ThreadID: "thr_none", CreatedAt: at}); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("turn of an unknown thread: %v", err)
	}

	// Turns added at once get distinct, consecutive numbers.
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			turn := assistant.Turn{
				ThreadID: "thr_1", MessageID: "msg_" + strconv.Itoa(i), FP: "user-7", Question: "q", Answer: "a [1]", Model: "extractive",
				Status: assistant.TurnAnswered, CreatedAt: at.Add(time.Duration(i+1) * time.Minute),
				Sources:       []assistant.TurnSource{{ID: "src_1", URL: "https://d.example/a", Title: "A", Path: "a", Score: 0.5}},
				RetrievalTime: 1500 * time.Microsecond, FirstTextTime: 2 * time.Millisecond, TotalTime: 3 * time.Second,
				InputTokens: 10, OutputTokens: 20,
			}
			if _, err := s.AddTurn(ctx, turn); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	turns, err := s.RecentTurns(ctx, "thr_1", 3)
	check(err)
	if len(turns) != 3 || turns[0].Seq != 3 || turns[2].Seq != 5 {
		t.Fatalf("recent turns = %+v", turns)
	}
	got := turns[2]
	if got.FP != "user-7" || got.Answer != "a [1]" || len(got.Sources) != 1 || got.Sources[0] != (assistant.TurnSource{ID: "src_1", URL: "https://d.example/a", Title: "A", Path: "a", Score: 0.5}) ||
		got.RetrievalTime != 1500*time.Microsecond || got.TotalTime != 3*time.Second || got.InputTokens != 10 || got.OutputTokens != 20 {
		t.Fatalf("turn = %+v", got)
	}
	back, err := s.GetThread(ctx, "thr_1")
	check(err)
	if back.Domain != "site" || back.OrgID != "acme" || back.FP != "anonymous" || !back.CreatedAt.Equal(at) || !back.UpdatedAt.After(at) {
		t.Fatalf("thread = %+v", back)
	}
	if none, err := s.RecentTurns(ctx, "thr_none", 3); err != nil || len(none) != 0 {
		t.Fatalf("turns of an unknown thread = %v, %v", none, err)
	}
}
