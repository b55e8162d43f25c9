// Package app wires docsmith together: it opens the store, builds the
// services, starts the HTTP server and the workers, and shuts them down in
// reverse order.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/agentrun"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/dashboard"
	"github.com/docsmith/docsmith/internal/demosite"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/httpapi"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/mcpserver"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
	"github.com/docsmith/docsmith/internal/websession"
	"github.com/docsmith/docsmith/internal/widget"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// Main is one docsmith process. Set the fields, call Start, then Shutdown.
type Main struct {
	Config config.Config
	Log    *slog.Logger
	// Out receives what an operator must see once: the demo keys.
	Out io.Writer
	// Runner carries out agent turns; nil means the real agent.
	Runner agentjob.Runner
	Now    func() time.Time
	// LookupEnv reads the forge tokens projects name; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// DemoDocs is the docs site a first start's demo project begins with,
	// and the demo page shows; nil means docsmith's own docs.
	DemoDocs fs.FS
	// Version and Commit name this build on /metrics, as the labels of
	// docsmith_build_info; empty ones read "unknown".
	Version, Commit string

	backend  *Backend
	fresh    *freshness.Service
	checks   *checkrun.Runner
	prChecks *prChecks
	turns    *assistant.TurnWriter
	api      *httpapi.Server
	ui       *dashboard.Handler
	http     *http.Server
	listener net.Listener
	stopPool context.CancelFunc
	wg       sync.WaitGroup
	workerID string

	// modelClient sends every model call of this server, the assistant's
	// and the agent's, which share its idle connections.
	modelClient *http.Client

	// traffic keeps the answer checks found in the domains' traffic: the
	// dashboard lists them, and a runner of checks asks them
	// (checkrun.Config.Traffic).
	traffic *trafficcheck.Service
}

// Start opens the store and begins serving and working. It returns once the
// listener is bound; Addr tells where.
func (m *Main) Start(ctx context.Context) error {
	if m.Now == nil {
		m.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if m.Out == nil {
		m.Out = io.Discard
	}
	if m.LookupEnv == nil {
		m.LookupEnv = os.LookupEnv
	}
	m.modelClient = llm.NewHTTPClient()
	git, err := gitcli.New(GitConfig(m.Config, m.Log))
	if err != nil {
		return fmt.Errorf("docsmith needs git: %w", err)
	}
	registry := prometheus.NewRegistry()
	b, err := openBackend(ctx, m.Config, m.Log, registry)
	if err != nil {
		return err
	}
	m.backend = b
	// The domains' indexes load while the rest starts and the first
	// requests arrive.
	b.Start(ctx, m.Config.Role != RoleWorker, m.Log)
	tenants := tenant.NewService(b.Tenants, m.Now).WithRemotePolicy(RemotePolicy(m.Config))
	built := NewIndexer(m.Config, git, b.Tenants, b.Index, b.Catalogs, m.LookupEnv, m.Log)
	// Every build, however asked for, is recorded as the domain's index
	// state.
	indexer := &RecordingIndexer{Indexer: built, Recorder: freshness.NewRecorder(b.IndexStates, m.Now, registry), Now: m.Now}
	widgetBundle := widget.Embedded()
	var demo http.Handler
	if m.Config.Demo && b.Kind == BackendSQLite { // its repository is local to this process
		if err := createDemo(ctx, tenants, git, indexer, m.Config, demoDocs(m.DemoDocs), m.Out); err != nil {
			_ = b.Close()
			return fmt.Errorf("create demo organization: %w", err)
		}
		// The demo page is a convenience: without it the server still
		// does its whole job, so a failure is logged, not fatal.
		if demo, err = m.demoSite(ctx, tenants, widgetBundle.Path()); err != nil {
			m.Log.Warn("no demo page", "err", err)
		}
	}

	hub := b.Hub
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "docsmith_build_info",
			Help:        "Always 1; its labels name the version and commit this process runs.",
			ConstLabels: prometheus.Labels{"version": cmp.Or(m.Version, "unknown"), "commit": cmp.Or(m.Commit, "unknown")},
		}, func() float64 { return 1 }))
	if b.Local != nil {
		// Group commit at work: fewer commits than transactions.
		local := b.Local
		registry.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "docsmith_sqlite_write_transactions_total", Help: "Write transactions committed to the SQLite store."},
				func() float64 { return float64(local.WriteStats().Transactions) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "docsmith_sqlite_write_commits_total", Help: "Commits of the SQLite store, each holding one or more write transactions."},
				func() float64 { return float64(local.WriteStats().Commits) }),
		)
	}
	if b.Postgres != nil {
		// Group commit of job creates: fewer statements than jobs.
		pg := b.Postgres
		registry.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "docsmith_postgres_job_creates_total", Help: "Jobs created without an idempotency key, stored together with the creates of the moment."},
				func() float64 { return float64(pg.JobCreateStats().Jobs) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "docsmith_postgres_job_create_statements_total", Help: "Statements, each committed on its own, that stored those jobs."},
				func() float64 { return float64(pg.JobCreateStats().Statements) }),
		)
	}
	jobs := agentjob.NewService(b.Jobs, hub, m.Now)
	// The agent reads the projects' repositories for the workflows too,
	// in every role: a webhook on an API replica syncs them.
	agent := m.agent(git)
	stats := analytics.NewService(b.Analytics)
	// The domains' indexes follow their branches: pushes (webhooks, and
	// our own automerge pushes) rebuild at once, and a poll catches the
	// rest. After each build, the gaps whose job's work it holds are
	// asked again.
	m.fresh = freshness.New(freshness.Config{
		Tenants:      b.Tenants,
		Heads:        runnerHeads{agent},
		Indexer:      indexerBuilds{built},
		Recorder:     indexer.Recorder,
		PollInterval: m.Config.IndexPollInterval,
		Built:        m.gapProver(b, git, jobs, stats).Built,
		Now:          m.Now,
		Log:          m.Log,
	})
	workflows := workflowrun.New(b.Workflows, b.Tenants, jobs, agent, workflowrun.Config{
		Location:          m.Config.Workflows.Location,
		DailyCap:          m.Config.Workflows.DailyCap,
		NewRunWhileActive: m.Config.Workflows.NewRunWhileActive,
		SyncInterval:      m.Config.Workflows.SyncInterval,
		Tick:              m.Config.Workflows.Tick,
		LookupEnv:         m.LookupEnv,
		DocsPushed:        m.docsPushed,
		PullRequests:      lateQueue{m},
		Log:               m.Log,
		Now:               m.Now,
	})
	if m.Config.Demo && b.Kind == BackendSQLite {
		m.syncDemoWorkflows(ctx, tenants, workflows)
	}
	// Turns are written behind the answers, several per transaction; the
	// writer outlives the HTTP server so that Shutdown can flush it.
	m.turns = assistant.NewTurnWriter(assistant.TurnWriterConfig{Store: b.Threads, Log: m.Log, Registerer: registry})
	assistantSvc := m.newAssistant(b, m.turns, registry)
	m.traffic = NewTrafficChecks(b, m.Now, m.Log)
	// Answer checks ask the served index, and an index of a ref of their
	// own; their questions are kept nowhere.
	m.checks = NewCheckRunner(m.Config, git, b, m.modelConfig(), m.traffic, m.LookupEnv, m.Log)
	m.prChecks = m.newPRChecks(b)
	ui, err := dashboard.New(dashboard.Deps{
		Tenants:        tenants,
		Jobs:           jobs,
		Analytics:      stats,
		Spend:          assistantSvc,
		IndexStatus:    m.fresh,
		Catalog:        assistantSvc,
		Sessions:       websession.NewManager(b.Sessions, b.Tenants, m.Now),
		Log:            m.Log,
		Now:            m.Now,
		TrustedProxies: m.Config.TrustedProxies,
		TrafficChecks:  m.traffic,
		CheckRuns:      b.CheckRuns,
	})
	if err != nil {
		_ = m.turns.Close(ctx)
		_ = b.Close()
		return fmt.Errorf("build the dashboard: %w", err)
	}
	m.ui = ui
	limiter := ratelimit.New(b.Limits, m.Now)
	proofOfWork, err := m.proofOfWork(ctx, b, limiter)
	if err != nil {
		_ = m.turns.Close(ctx)
		_ = b.Close()
		return fmt.Errorf("set up proof of work: %w", err)
	}
	m.api = httpapi.New(httpapi.Deps{
		Tenants:   tenants,
		Jobs:      jobs,
		Assistant: assistantSvc,
		MCP:       mcpserver.New(assistantSvc, m.Log, buildVersion()),
		Analytics: stats,
		UI:        ui,
		Indexer:   indexer,
		Freshness: m.fresh,
		Workflows: workflows,
		Limiter:   limiter,
		Limits: httpapi.Limits{
			AgentPerProjectHour:  m.Config.Limits.AgentPerProjectHour,
			AssistantPerKeyMonth: m.Config.Limits.AssistantPerKeyMonth,
			AssistantPerOrgHour:  m.Config.Limits.AssistantPerOrgHour,
			AssistantPerIPDay:    m.Config.Limits.AssistantPerIPDay,
			AssistantPerIPMinute: m.Config.Limits.AssistantPerIPMinute,
			AssistantPerIPBurst:  m.Config.Limits.AssistantPerIPBurst,
		},
		Log:            m.Log,
		Registry:       registry,
		Ready:          b.Ping,
		MaxBodyBytes:   m.Config.MaxBodyBytes,
		TrustedProxies: m.Config.TrustedProxies,
		Widget:         widgetBundle,
		Demo:           demo,
		WebhookReads:   m.Config.Workflows.WebhookReads,
		ProofOfWork:    proofOfWork,
		Checks:         m.checks,
		CheckRuns:      b.CheckRuns,
	})

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", m.Config.Addr)
	if err != nil {
		_ = m.turns.Close(ctx)
		_ = b.Close()
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	m.listener = ln
	// Requests do not end with ctx: Shutdown lets them finish, and stops
	// the long-lived streams with their own signals.
	baseCtx := context.WithoutCancel(ctx)
	m.http = &http.Server{
		Handler:           forRole(m.Config.Role, m.api.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	m.wg.Go(func() {
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Log.Error("http server stopped", "err", err)
		}
	})

	if runsWorkers(m.Config) {
		host, _ := os.Hostname()
		m.workerID = fmt.Sprintf("%s/%d/%d", host, os.Getpid(), m.Now().UnixNano())
		runner := m.Runner
		if runner == nil {
			// Workspaces of turns killed with an earlier process go now;
			// each turn sweeps again before it starts.
			agent.SweepWorkspaces()
			runner = agent
		}
		pool := agentjob.NewPool(agentjob.PoolConfig{
			WorkerID:      m.workerID,
			Workers:       m.Config.Workers,
			Lease:         m.Config.TurnLease,
			Poll:          m.Config.QueuePoll,
			MaxAttempts:   m.Config.TurnMaxAttempts,
			TurnTimeout:   m.Config.TurnTimeout,
			ShutdownGrace: m.Config.ShutdownTimeout,
		}, b.Jobs, b.Tenants, runner, hub, m.Log, m.Now)
		poolCtx, stopPool := context.WithCancel(context.WithoutCancel(ctx))
		m.stopPool = stopPool
		m.wg.Go(func() { pool.Run(poolCtx) })
		// Every worker process ticks the schedules: each slot's key makes
		// it start once, however many tick at the same time.
		m.wg.Go(func() { workflows.Run(poolCtx) })
		// And polls the domains' branches: of two replicas that both see a
		// move, the second build finds the pages unchanged.
		m.wg.Go(func() { m.fresh.Run(poolCtx) })
		// And runs the domains' answer checks on their schedules: each
		// due run is claimed in the database, so one replica runs it.
		watch := m.newCheckWatch(b, m.checks, registry)
		m.wg.Go(func() { watch.Run(poolCtx) })
		// And checks the pull requests' heads, each claimed by one.
		if m.prChecks != nil {
			m.wg.Go(func() { m.prChecks.worker.Run(poolCtx) })
		}
	}
	if demo != nil {
		fmt.Fprintf(m.Out, "docsmith: the demo docs site with the chat widget is at %s%s/\n", localURL(ln.Addr().String()), demosite.Prefix)
		fmt.Fprintf(m.Out, "docsmith: the dashboard is at %s/ui/ (sign in with the demo admin key)\n", localURL(ln.Addr().String()))
	}
	m.Log.Info("docsmith started", "addr", ln.Addr().String(), "data_dir", m.Config.DataDir, "backend", b.Kind, "role", m.Config.Role, "workers", m.Config.Workers)
	return nil
}

// demoSite is the demo docs site with the widget, or nil when this install
// has no demo domain.
func (m *Main) demoSite(ctx context.Context, tenants *tenant.Service, widgetPath string) (http.Handler, error) {
	key, err := demoWidgetKey(ctx, tenants, m.Config.DataDir)
	if err != nil || key == "" {
		return nil, err
	}
	cfg := demosite.Config{Docs: demoDocs(m.DemoDocs), Domain: DemoDomain, Key: key, WidgetPath: widgetPath}
	if m.DemoDocs == nil {
		cfg.Examples = DemoQuestions()
	}
	site, err := demosite.New(cfg)
	if err != nil {
		return nil, err
	}
	return site, nil
}

// syncDemoWorkflows reads the demo project's workflows once, so that its
// scheduled workflow runs without anyone syncing it first. Like the demo
// page, it is a convenience: a failure is logged, not fatal.
func (m *Main) syncDemoWorkflows(ctx context.Context, tenants *tenant.Service, workflows *workflowrun.Service) {
	p, err := tenants.Store().GetProject(ctx, DemoProject)
	if err != nil {
		return // no demo project in this data directory
	}
	l, err := workflows.List(ctx, p)
	if err == nil && !l.SyncedAt.IsZero() {
		return
	}
	if _, err := workflows.Sync(ctx, p); err != nil {
		m.Log.Warn("demo workflows not synced", "err", err)
	}
}

// Addr is the address the server listens on.
func (m *Main) Addr() string { return m.listener.Addr().String() }

// Shutdown stops accepting requests (those that still arrive get a 503),
// ends the job event streams, lets running requests, answers and turns
// finish within the shutdown timeout (handing unfinished turns back to the
// queue), then stops the answers still streaming, writes the assistant's
// queued turns and closes the store.
func (m *Main) Shutdown(ctx context.Context) error {
	m.api.Drain()
	m.api.StopEventStreams()
	m.ui.StopStreams()
	if m.stopPool != nil {
		m.stopPool()
	}
	graceCtx, cancel := context.WithTimeout(ctx, m.Config.ShutdownTimeout)
	defer cancel()
	httpErr := m.http.Shutdown(graceCtx)
	if httpErr != nil {
		// The grace is over: stop the answers still streaming (they tell
		// their readers in-band) and give them a moment to end.
		m.api.StopStreams()
		endCtx, cancelEnd := context.WithTimeout(context.WithoutCancel(ctx), answerStopGrace)
		defer cancelEnd()
		if err := m.http.Shutdown(endCtx); err != nil {
			httpErr = fmt.Errorf("http shutdown: requests still running after %s: %w", m.Config.ShutdownTimeout+answerStopGrace, errors.Join(err, m.http.Close()))
		} else {
			httpErr = nil
		}
	}
	m.wg.Wait()
	// Builds still running stop, writing nothing: the next start's poll
	// finds the branch moved.
	m.fresh.Close()
	// Every answer has ended: store the turns still queued before the
	// store closes.
	flushCtx, cancelFlush := context.WithTimeout(context.WithoutCancel(ctx), m.Config.ShutdownTimeout)
	defer cancelFlush()
	turnsErr := m.turns.Close(flushCtx)
	err := errors.Join(httpErr, turnsErr, m.backend.Close())
	m.Log.Info("docsmith stopped")
	return err
}

// answerStopGrace is how long answers stopped at the end of the shutdown
// timeout have to write their in-band error and end.
const answerStopGrace = 2 * time.Second

// agent is the real runner: the agent over git, the forges and the models.
// GitConfig is how every git of this installation runs: in the data
// directory's own home, under the operator's remote policy.
func GitConfig(cfg config.Config, log *slog.Logger) gitcli.Config {
	repos := RemotePolicy(cfg)
	return gitcli.Config{HomeDir: filepath.Join(cfg.DataDir, "git-home"), Log: log, AllowHTTP: repos.AllowHTTP, RepoHosts: repos.Hosts}
}

// RemotePolicy is which repository locations the operator accepts, for
// projects when they are stored and for git when it clones or fetches.
func RemotePolicy(cfg config.Config) gitcli.RemotePolicy {
	return gitcli.RemotePolicy{AllowHTTP: cfg.Agent.GitAllowHTTP, Hosts: cfg.Agent.RepoHosts}
}

func (m *Main) agent(git *gitcli.Git) *agentrun.Runner {
	cfg := m.Config
	workDir := cfg.Agent.WorkDir
	if workDir == "" {
		workDir = filepath.Join(cfg.DataDir, "work")
	}
	models := m.modelConfig()
	return agentrun.New(agentrun.Config{
		WorkDir:     workDir,
		Git:         git,
		OpenModel:   func(name string) (llm.Model, error) { return llm.Open(name, models) },
		HTTPClient:  &http.Client{},
		LookupEnv:   m.LookupEnv,
		AuthorName:  cfg.Agent.AuthorName,
		AuthorEmail: cfg.Agent.AuthorEmail,
		Budgets: agentrun.Budgets{
			MaxSteps:        cfg.Agent.MaxSteps,
			MaxTokens:       cfg.Agent.MaxTokens,
			MaxFilesChanged: cfg.Agent.MaxFilesChanged,
			MaxLinesChanged: cfg.Agent.MaxLinesChanged,
		},
		BasePushed: m.basePushed,
		Log:        m.Log,
		Now:        m.Now,

		// The agent's own pull requests are checked as the team's are.
		PullRequestPushed: m.pullRequestPushed,
	})
}

// docsPushed rebuilds, in the background, the indexes of the domains that
// read the branch a verified push webhook moved, and returns their ids.
func (m *Main) docsPushed(ctx context.Context, p tenant.Project, push workflowrun.Pushed) []string {
	ids, err := m.fresh.Pushed(context.WithoutCancel(ctx), p, push.Branch, push.After, freshness.ReasonPush)
	if err != nil {
		// The push is handled all the same; the poll catches up.
		m.Log.Warn("index: rebuild after a push not started", "project", p.ID, "branch", push.Branch, "err", err)
	}
	return ids
}

// basePushed rebuilds the indexes of the domains that read the base branch
// an automerge turn has just pushed to.
func (m *Main) basePushed(ctx context.Context, p tenant.Project) {
	if m.fresh == nil {
		return
	}
	if _, err := m.fresh.Pushed(context.WithoutCancel(ctx), p, p.BaseRef, "", freshness.ReasonAutomerge); err != nil {
		m.Log.Warn("index: rebuild after an automerge push not started", "project", p.ID, "err", err)
	}
}

// buildVersion is the main module's version as the Go toolchain stamped it
// ("(devel)" for a build from a work tree).
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
