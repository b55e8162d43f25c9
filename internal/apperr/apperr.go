// Package apperr is docsmith's one error type: a code the client sees, a
// message that says what to fix, and a private cause that only reaches the log.
package apperr

import (
	"errors"
	"fmt"
)

// Code classifies an error for the client. The HTTP layer maps each code to
// exactly one status.
type Code string

const (
	Invalid          Code = "invalid"            // 400
	Unauthorized     Code = "unauthorized"       // 401
	Forbidden        Code = "forbidden"          // 403
	NotFound         Code = "not_found"          // 404
	MethodNotAllowed Code = "method_not_allowed" // 405
	Conflict         Code = "conflict"           // 409
	TooLarge         Code = "too_large"          // 413
	UnsupportedType  Code = "unsupported_media"  // 415
	RateLimited      Code = "rate_limited"       // 429
	Unavailable      Code = "unavailable"        // 503
	BadGateway       Code = "bad_gateway"        // 502: a server we depend on (a git remote) failed
	StorageFull      Code = "storage_full"       // 507: the disk under the database is full
	Internal         Code = "internal"           // 500
)

// Error is an error with a client-facing code and message. Cause is for the
// log only and never reaches a response.
type Error struct {
	Code    Code
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error with the given code and a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with the given code and message that keeps cause for
// the log.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the client-facing message of err. Errors that are not an
// *Error get a generic message, so causes never leak to clients.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Message
	}
	return "internal error; the cause is in the server log"
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
