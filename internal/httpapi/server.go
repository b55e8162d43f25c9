// Package httpapi is docsmith's HTTP interface: the route table, auth,
// request decoding, rate limits, errors, the job event stream, and the
// assistant's discovery endpoints with their CORS.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/mcpserver"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/widget"
)

// Limits are the configured rate limits; 0 turns one off.
type Limits struct {
	AgentPerProjectHour  int
	AssistantPerKeyMonth int
	AssistantPerOrgHour  int
	AssistantPerIPDay    int
	AssistantPerIPMinute int
	AssistantPerIPBurst  int // per client IP per BurstWindow
}

// Deps is what the server needs.
type Deps struct {
	Tenants   *tenant.Service
	Jobs      *agentjob.Service
	Assistant *assistant.Service
	Analytics *analytics.Service
	// UI serves the dashboard under /ui/; nil leaves it out.
	UI      http.Handler
	Indexer Indexer
	// Freshness reads the state of the domains' indexes; nil answers the
	// domain status with 503.
	Freshness      Freshness
	MCP            MCPServer
	Limiter        *ratelimit.Limiter
	Limits         Limits
	Log            *slog.Logger
	Registry       *prometheus.Registry
	Ready          func(ctx context.Context) error
	MaxBodyBytes   int64
	TrustedProxies []netip.Prefix
	// EventPoll is how often an event stream looks for events written by
	// other processes; EventHeartbeat how often an idle stream sends a comment.
	EventPoll      time.Duration
	EventHeartbeat time.Duration
	// Widget is the chat widget script served at /widget.js.
	Widget *widget.Bundle
	// Demo serves the demo docs site under /demo/ (and GET / redirects
	// there); nil when this install has no demo.
	Demo http.Handler
	// ProofOfWork hands out and checks the challenges of domains that ask
	// for proof of work; nil answers those domains' assistant with 503.
	ProofOfWork ProofOfWork
	// Workflows runs agent workflows and takes forge webhooks
	// (workflowrun.Service); nil answers their endpoints with 503.
	Workflows Workflows
	// WebhookReads is how many forge webhooks this process handles at
	// once, each holding a body of up to 5 MiB before its signature can
	// be checked; more are answered 503 without reading them. 0 means
	// DefaultWebhookReads.
	WebhookReads int
	// Checks runs domains' answer checks (checkrun.Runner) and CheckRuns
	// keeps the runs; nil answers the checks endpoints with 503.
	Checks    CheckRunner
	CheckRuns checkrun.Store
	// CheckRunTimeout bounds one run of the checks endpoint, and
	// CheckRunsPerDomain is how many runs of one domain it makes at once;
	// 0 means DefaultCheckRunTimeout and DefaultCheckRunsPerDomain.
	CheckRunTimeout    time.Duration
	CheckRunsPerDomain int
}

// DefaultWebhookReads is how many webhooks are handled at once when Deps
// does not say: forges deliver a push or two at a time, and 16 bodies
// hold at most 80 MiB.
const DefaultWebhookReads = 16

// Indexer builds a domain's search index (indexer.Indexer).
type Indexer interface {
	Index(ctx context.Context, d tenant.Domain) (indexer.IndexResult, error)
}

// ErrShuttingDown is why a stream the server stopped has ended.
var ErrShuttingDown = errors.New("the server is shutting down")

// MCPServer answers Model Context Protocol requests over a domain's docs
// (mcpserver.Server), once the request's key was checked and counted; the
// access holds the reader's groups, from its reader token, and whether the
// request may write (a request without a key may not). It returns an
// apperr error, before writing anything, for a request it refuses: one
// that is not a single message.
type MCPServer interface {
	ServeMCP(w http.ResponseWriter, r *http.Request, a mcpserver.Access) error
}

// Server serves the API.
type Server struct {
	Deps
	metrics  *metrics
	draining atomic.Bool
	// webhookSlots holds a token for each webhook being handled.
	webhookSlots chan struct{}
	// checkRunSlots counts the check runs of each domain going on.
	checkRunSlots domainSlots

	// Long-lived streams have their own stop signals, apart from the
	// requests' contexts: event streams end as soon as shutdown begins
	// (a client reconnects elsewhere with Last-Event-ID), answers are
	// given the grace period and stopped only after it.
	stopEvents     chan struct{}
	stopEventsOnce sync.Once
	answers        context.Context
	stopAnswers    context.CancelCauseFunc
}

// New returns a Server.
func New(d Deps) *Server {
	if d.EventPoll == 0 {
		d.EventPoll = time.Second
	}
	if d.EventHeartbeat == 0 {
		d.EventHeartbeat = 15 * time.Second
	}
	if d.Widget == nil {
		d.Widget = widget.Embedded()
	}
	if d.WebhookReads <= 0 {
		d.WebhookReads = DefaultWebhookReads
	}
	s := &Server{Deps: d, metrics: newMetrics(d.Registry), stopEvents: make(chan struct{}), webhookSlots: make(chan struct{}, d.WebhookReads)}
	s.answers, s.stopAnswers = context.WithCancelCause(context.Background())
	return s
}

// Drain makes new requests get 503 while the process shuts down; requests
// already running go on.
func (s *Server) Drain() { s.draining.Store(true) }

// StopEventStreams ends the job event streams.
func (s *Server) StopEventStreams() { s.stopEventsOnce.Do(func() { close(s.stopEvents) }) }

// StopStreams ends every stream: the event streams, and the assistant's
// answers, which tell their readers in-band that the server stopped them.
func (s *Server) StopStreams() {
	s.StopEventStreams()
	s.stopAnswers(ErrShuttingDown)
}

// answerContext is the context of one answer: it ends when the client goes
// away or when StopStreams stops the answers, with ErrShuttingDown as its
// cause.
func (s *Server) answerContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.answers, func() { cancel(context.Cause(s.answers)) })
	return ctx, func() { stop(); cancel(nil) }
}

// Handler returns the whole API with its middleware.
func (s *Server) Handler() http.Handler {
	return s.middleware(s.routes())
}
