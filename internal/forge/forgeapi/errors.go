package forgeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a failed call to a forge. Its message says what failed (which
// forge, which request, which status) and what to check, and never holds the
// token: every text that came from the forge or the network is scrubbed when
// the Error is built.
type Error struct {
	Forge   string // github, gitlab or gitea
	Method  string
	Path    string // the API path as the forge documents it, with the query
	Status  int    // the HTTP status; 0 when no answer arrived
	Message string // what the forge or the network said, scrubbed and shortened
	Hint    string // what to check
	// Err is the transport, context or decoding error behind the failure, so
	// that errors.Is(err, context.DeadlineExceeded) works. It is nil for an
	// error status: the library's error would carry the raw reply.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Forge)
	b.WriteString(": ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d from ", e.Status)
	}
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Temporary reports whether the same call may succeed later unchanged: the
// forge failed (5xx), limited the rate (429) or could not be reached. A
// call that ran out of time or was canceled is not temporary here; its
// context decides.
func (e *Error) Temporary() bool {
	switch {
	case e.Status == 0:
		return e.Err != nil && !errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded)
	case e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	}
	return false
}

// Call names one request for error messages, and what to check when the
// forge answers 404 or refuses it (409, 422) if the defaults do not fit.
type Call struct {
	Method   string
	Path     string
	NotFound string
	Refused  string
}

// Reply is what a library kept of a failed call's answer.
type Reply struct {
	Status  int // 0: no answer
	Header  http.Header
	Body    []byte // the raw body, when the library kept it
	Message string // the forge's message, as the library parsed it
}

// Describer builds the *Error of a failed call for one configured forge.
type Describer struct {
	forge       string
	apiBase     string
	token       string
	tokenSource string
}

// NewDescriber returns a Describer for the forge kind at apiBase (which must
// hold no credentials). token is only used to scrub it from messages.
func NewDescriber(forge, apiBase, token, tokenSource string) Describer {
	return Describer{forge: forge, apiBase: apiBase, token: token, tokenSource: tokenSource}
}

// Errorf returns a plain error that names the forge, with the token scrubbed.
func (d Describer) Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	msg := d.forge + ": " + d.scrub(err.Error())
	return &scrubbed{msg: msg, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// Fail describes a call that failed. cause is the library's error; reply is
// what came back, if anything did.
func (d Describer) Fail(ctx context.Context, call Call, reply Reply, cause error) *Error {
	e := &Error{Forge: d.forge, Method: call.Method, Path: d.scrub(call.Path), Status: reply.Status}
	switch {
	case reply.Status == 0 && ctx.Err() != nil:
		e.Err = ctx.Err()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e.Message = "no answer before the deadline"
			e.Hint = "the forge at " + d.apiBase + " is slow or unreachable, or the turn ran out of time"
		} else {
			e.Message = "canceled"
		}
	case reply.Status == 0:
		e.Err = cause
		if cause != nil {
			e.Message = d.clean(cause.Error())
		}
		e.Hint = "check the API base URL " + d.apiBase + " and that the forge is reachable from here"
	case reply.Status >= 200 && reply.Status < 300:
		e.Err = cause
		if isHTML(reply) {
			e.Message = d.notJSON(reply, "")
		} else {
			e.Message = "the reply is not the JSON the API documents"
			if cause != nil {
				e.Message += " (" + d.clean(cause.Error()) + ")"
			}
		}
		e.Hint = "check the API base URL " + d.apiBase + ": it must be the root of the forge's REST API"
	default:
		e.Message = d.message(reply)
		e.Hint = d.statusHint(call, reply.Status)
		if isHTML(reply) {
			e.Hint += "; an HTML page usually means that the API base URL " + d.apiBase +
				" is not the forge's REST API, or that a proxy in front of it answered"
		}
	}
	return e
}

// Token names the token for hints: "the token" or "the token in ACME_TOKEN".
func (d Describer) Token() string {
	if d.tokenSource != "" {
		return "the token in " + d.tokenSource
	}
	return "the token"
}

// BadReply describes a reply that parsed but lacks what the API promises,
// such as a created pull request without a number.
func (d Describer) BadReply(call Call, status int, msg string) *Error {
	return &Error{
		Forge: d.forge, Method: call.Method, Path: d.scrub(call.Path), Status: status,
		Message: d.clean(msg),
		Hint:    "check the API base URL " + d.apiBase + ": it must be the root of the forge's REST API",
	}
}

func (d Describer) statusHint(call Call, status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "check " + d.Token() + ": the forge did not accept it (missing, mistyped, expired or revoked)"
	case status == http.StatusForbidden:
		return "check that " + d.Token() + " may write to the repository and its pull requests (or the forge limited the rate: try again later)"
	case status == http.StatusNotFound:
		if call.NotFound != "" {
			return call.NotFound
		}
		return "check the repository URL (owner/repo) and that " + d.Token() + " can see the repository"
	case status == http.StatusConflict, status == http.StatusUnprocessableEntity:
		if call.Refused != "" {
			return call.Refused
		}
		return "the forge refused the request"
	case status == http.StatusTooManyRequests:
		return "the forge limited the rate: try again later"
	case status >= 500:
		return "the forge failed: try again later"
	}
	return ""
}

// message says what the forge said: its parsed message when the reply was
// JSON, or what kind of page came back when it was not.
func (d Describer) message(r Reply) string {
	if isHTML(r) || (len(r.Body) > 0 && !json.Valid(r.Body)) {
		return d.notJSON(r, "")
	}
	if r.Message != "" {
		return d.clean(r.Message)
	}
	return ""
}

func (d Describer) notJSON(r Reply, fallback string) string {
	if isHTML(r) {
		msg := "the reply is an HTML page, not JSON"
		if t := title(r); t != "" {
			msg += " (title " + d.clean(t) + ")"
		}
		return msg
	}
	text := string(r.Body)
	if text == "" {
		text = r.Message
	}
	if strings.TrimSpace(text) == "" {
		if fallback != "" {
			return fallback
		}
		return "the reply is empty"
	}
	return "the reply is not JSON: " + d.clean(text)
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func title(r Reply) string {
	for _, s := range []string{string(r.Body), r.Message} {
		if m := titleRE.FindStringSubmatch(s); m != nil {
			return strings.TrimSpace(m[1])
		}
	}
	return ""
}

func isHTML(r Reply) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil &&
		(mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	for _, s := range []string{string(r.Body), r.Message} {
		l := strings.ToLower(s)
		if strings.Contains(l, "<html") || strings.Contains(l, "<!doctype html") {
			return true
		}
	}
	return false
}

const maxMessage = 300

// clean scrubs the token, folds control characters and runs of space into
// one space, and shortens s so that a hostile reply cannot flood a log line.
func (d Describer) clean(s string) string {
	s = d.scrub(s)
	var b strings.Builder
	space := false
	n := 0
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if n >= maxMessage {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return d.scrub(b.String())
}

// minScrub is the shortest token scrubbed: a shorter one would mangle plain
// words, and no forge issues tokens that short.
const minScrub = 8

func (d Describer) scrub(s string) string {
	if len(d.token) < minScrub {
		return s
	}
	return strings.ReplaceAll(s, d.token, "[redacted]")
}
