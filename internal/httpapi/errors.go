package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"syscall"

	"github.com/docsmith/docsmith/internal/apperr"
)

// statusOf is the one mapping from error codes to HTTP statuses.
var statusOf = map[apperr.Code]int{
	apperr.Invalid:          http.StatusBadRequest,
	apperr.Unauthorized:     http.StatusUnauthorized,
	apperr.Forbidden:        http.StatusForbidden,
	apperr.NotFound:         http.StatusNotFound,
	apperr.MethodNotAllowed: http.StatusMethodNotAllowed,
	apperr.Conflict:         http.StatusConflict,
	apperr.TooLarge:         http.StatusRequestEntityTooLarge,
	apperr.UnsupportedType:  http.StatusUnsupportedMediaType,
	apperr.RateLimited:      http.StatusTooManyRequests,
	apperr.Unavailable:      http.StatusServiceUnavailable,
	apperr.BadGateway:       http.StatusBadGateway,
	apperr.StorageFull:      http.StatusInsufficientStorage,
	apperr.Internal:         http.StatusInternalServerError,
}

// errorBody is the one error shape: {"error": "<what to fix>"}.
type errorBody struct {
	Error string `json:"error"`
}

// handlerFunc is a handler that returns its error; handle writes it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h, writing any error it returns as the JSON error body. If
// h already started a response (a stream), the error is only logged.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, _ := w.(*recorder)
		err := h(w, r)
		if err == nil {
			return
		}
		if rec != nil && rec.status != 0 {
			s.Log.WarnContext(r.Context(), "error after the response started", "request_id", requestID(r.Context()), "err", err)
			return
		}
		s.writeError(w, r, err)
	})
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		return // the client is gone; nobody reads a body
	}
	if s.draining.Load() && apperr.CodeOf(err) == apperr.Internal && (errors.Is(err, ErrShuttingDown) || errors.Is(err, context.Canceled)) {
		// Work cut short by the shutdown is not the client's fault, nor
		// an internal error: the client may retry on another process.
		w.Header().Set("Connection", "close")
		err = apperr.Wrap(err, apperr.Unavailable, "the server is shutting down; retry in a moment")
	}
	if apperr.CodeOf(err) == apperr.Internal && errors.Is(err, syscall.ENOSPC) {
		err = apperr.Wrap(err, apperr.StorageFull, "the server's disk is full: the request could not be completed; retry once an operator has freed space")
	}
	code := apperr.CodeOf(err)
	status := statusOf[code]
	switch code {
	case apperr.Internal:
		s.Log.ErrorContext(r.Context(), "internal error", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	case apperr.StorageFull:
		s.Log.ErrorContext(r.Context(), "disk full", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if rec, ok := w.(*recorder); ok && code != apperr.Internal {
		rec.errMessage = apperr.MessageOf(err)
	}
	writeJSON(w, status, errorBody{Error: apperr.MessageOf(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
