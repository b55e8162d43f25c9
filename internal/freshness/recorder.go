package freshness

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Recorder writes the outcome of every build, whoever asked for it (a
// trigger, 'docsmith index', the index endpoint), to the store and to the
// metrics.
type Recorder struct {
	store    Store
	now      func() time.Time
	rebuilds *prometheus.CounterVec
	duration prometheus.Histogram
}

// NewRecorder returns a Recorder over store. With reg, it registers the
// index metrics: docsmith_index_rebuilds_total{domain,result},
// docsmith_index_rebuild_duration_seconds and, read from the store at each
// scrape, docsmith_index_lag_seconds{domain}.
func NewRecorder(store Store, now func() time.Time, reg prometheus.Registerer) *Recorder {
	if now == nil {
		now = time.Now
	}
	r := &Recorder{
		store: store,
		now:   now,
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_index_rebuilds_total",
			Help: "Builds of a domain's index by this process, by result (ok or error).",
		}, []string{"domain", "result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "docsmith_index_rebuild_duration_seconds",
			Help:    "How long builds of domains' indexes took, successful or not.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}),
	}
	if reg != nil {
		reg.MustRegister(r.rebuilds, r.duration, &lagCollector{store: store, now: now})
	}
	return r
}

// Store is the store the Recorder writes to.
func (r *Recorder) Store() Store { return r.store }

// Record records a build that began at started: b on success, err on
// failure.
func (r *Recorder) Record(ctx context.Context, domain string, started time.Time, b Build, err error) error {
	at := r.now()
	took := at.Sub(started)
	r.duration.Observe(took.Seconds())
	if err != nil {
		r.rebuilds.WithLabelValues(domain, "error").Inc()
		return r.store.RecordFailure(ctx, domain, reason(err), at, took)
	}
	r.rebuilds.WithLabelValues(domain, "ok").Inc()
	return r.store.RecordBuilt(ctx, domain, Built{
		Commit: b.Commit, Pages: b.Pages, Passages: b.Passages,
		Started: started, At: at, Duration: took,
	})
}

// Failure records a failed attempt that built nothing, such as a head that
// could not be read.
func (r *Recorder) Failure(ctx context.Context, domain string, err error, at time.Time, took time.Duration) error {
	if rerr := r.store.RecordFailure(ctx, domain, reason(err), at, took); rerr != nil {
		return fmt.Errorf("record the failure of %s: %w", domain, rerr)
	}
	return nil
}

// lagCollector reads every domain's lag from the store at each scrape, so
// that every replica reports the same figure.
type lagCollector struct {
	store Store
	now   func() time.Time
}

var lagDesc = prometheus.NewDesc("docsmith_index_lag_seconds",
	"Seconds since the head of a domain's branch moved past the commit its index was built from; 0 when the index is at the head.",
	[]string{"domain"}, nil)

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	states, err := c.store.IndexStates(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(lagDesc, fmt.Errorf("read the index states: %w", err))
		return
	}
	now := c.now()
	for _, st := range states {
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, st.Lag(now).Seconds(), st.Domain)
	}
}
