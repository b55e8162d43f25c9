package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/apperr"
)

type ctxKey int

const requestIDKey ctxKey = 0

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// recorder remembers what a handler wrote, for the log and metrics.
type recorder struct {
	http.ResponseWriter
	status     int
	bytes      int64
	errMessage string
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and SetWriteDeadline.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docsmith_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "docsmith_http_request_duration_seconds", Help: "HTTP request duration by route (streams until they end).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration)
	}
	return m
}

// middleware wraps every request: request id, draining, panic recovery,
// access log and metrics.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(p)
				}
				s.Log.ErrorContext(r.Context(), "panic in handler", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					s.writeError(rec, r, apperr.New(apperr.Internal, "panic"))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			elapsed := time.Since(start)
			s.metrics.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues(route).Observe(elapsed.Seconds())
			// The access log's attributes are built only for a logger that
			// writes them.
			if !s.Log.Enabled(r.Context(), slog.LevelInfo) {
				return
			}
			attrs := []any{"request_id", id, "method", r.Method, "path", r.URL.Path, "route", route, "status", status, "bytes", rec.bytes, "duration", elapsed, "remote", r.RemoteAddr}
			if rec.errMessage != "" {
				attrs = append(attrs, "error", rec.errMessage)
			}
			s.Log.InfoContext(r.Context(), "request", attrs...)
		}()
		if s.draining.Load() && r.URL.Path != "/healthz" {
			w.Header().Set("Connection", "close")
			s.writeError(rec, r, apperr.New(apperr.Unavailable, "the server is shutting down; retry in a moment"))
			return
		}
		next.ServeHTTP(rec, r)
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
