package semantic

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count provider requests, their latency, and the searches that fell
// back to keyword ranking because a provider failed. A nil *Metrics counts
// nothing, so tests and tools may leave it out.
type Metrics struct {
	requests  *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// NewMetrics builds the metrics and registers them on reg (nil: kept
// unregistered, as tests do).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_search_provider_requests_total",
			Help: "HTTP requests to the embeddings and rerank providers, retries included, by provider and result: ok or the failure's reason (timeout, rate_limited, server, malformed, dimension, unreachable, refused, canceled).",
		}, []string{"provider", "result"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_search_provider_fallbacks_total",
			Help: "Searches that went on without a provider's answer (keyword ranking alone, or the fused order without rerank), by provider and reason.",
		}, []string{"provider", "reason"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "docsmith_search_provider_request_seconds",
			Help: "Time of one HTTP request to the embeddings or rerank provider, until its reply was read, by provider.",
			// Query-time calls live in tens to hundreds of milliseconds;
			// index-time batches may take seconds.
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"provider"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.fallbacks, m.latency)
	}
	return m
}

// Fallback counts one search that went on without provider's answer because
// of reason (see Reason).
func (m *Metrics) Fallback(provider, reason string) {
	if m == nil {
		return
	}
	m.fallbacks.WithLabelValues(provider, reason).Inc()
}

// request counts one HTTP request and how long it took.
func (m *Metrics) request(provider, result string, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(provider, result).Inc()
	m.latency.WithLabelValues(provider).Observe(took.Seconds())
}
