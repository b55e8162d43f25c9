// Package forgetest is a scripted forge for the adapters' tests: an
// httptest server that expects a fixed list of requests, in order, answers
// each with a canned reply, and fails the test when a request differs from
// the one expected (method, path, query, auth header, JSON body) or when a
// scripted request never came.
package forgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Exchange is one expected request and the reply to it.
type Exchange struct {
	Method string
	Path   string     // the escaped path, e.g. /api/v4/projects/g%2Fp/merge_requests
	Query  url.Values // the exact query parameters; nil means none
	// Body is the expected JSON body; nil means no body.
	Body map[string]any
	// Loose compares only Body's keys and requires every other field of the
	// request body to be a zero value (null, "", 0, false, [], {}). For SDKs
	// that send every field of their option struct.
	Loose bool

	Status      int         // default 200
	ContentType string      // default application/json
	Header      http.Header // more reply headers, e.g. Link
	Reply       string
	// Hang makes the handler wait until the client gives up, for deadlines.
	Hang bool
}

// Server is the scripted forge.
type Server struct {
	*httptest.Server
	t          testing.TB
	authHeader string
	authValue  string

	mu        sync.Mutex
	exchanges []Exchange
	next      int
}

// New starts a server that expects the exchanges in order, each carrying the
// header authHeader: authValue. It stops and checks that every exchange
// happened when the test ends.
func New(t testing.TB, authHeader, authValue string, exchanges ...Exchange) *Server {
	t.Helper()
	s := &Server{t: t, authHeader: authHeader, authValue: authValue, exchanges: exchanges}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next != len(s.exchanges) {
			t.Errorf("forgetest: %d of %d scripted requests were sent; the next one expected: %s %s",
				s.next, len(s.exchanges), s.exchanges[s.next].Method, s.exchanges[s.next].Path)
		}
	})
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.next >= len(s.exchanges) {
		s.mu.Unlock()
		s.t.Errorf("forgetest: unexpected request %s %s", r.Method, r.URL.RequestURI())
		http.Error(w, `{"message":"unexpected request"}`, http.StatusTeapot)
		return
	}
	ex := s.exchanges[s.next]
	s.next++
	s.mu.Unlock()

	where := fmt.Sprintf("request %s %s", r.Method, r.URL.RequestURI())
	if r.Method != ex.Method {
		s.t.Errorf("%s: method %s, want %s", where, r.Method, ex.Method)
	}
	if got := r.URL.EscapedPath(); got != ex.Path {
		s.t.Errorf("%s: path %s, want %s", where, got, ex.Path)
	}
	want := ex.Query
	if want == nil {
		want = url.Values{}
	}
	if got := r.URL.Query(); !reflect.DeepEqual(got, want) {
		s.t.Errorf("%s: query %v, want %v", where, got, want)
	}
	if got := r.Header.Get(s.authHeader); got != s.authValue {
		s.t.Errorf("%s: header %s is %q, want %q", where, s.authHeader, got, s.authValue)
	}
	s.checkBody(where, r, ex)

	if ex.Hang {
		<-r.Context().Done()
		return
	}
	ct := ex.ContentType
	if ct == "" {
		ct = "application/json"
	}
	for k, vs := range ex.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", ct)
	status := ex.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, ex.Reply)
}

func (s *Server) checkBody(where string, r *http.Request, ex Exchange) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("%s: reading body: %v", where, err)
		return
	}
	if ex.Body == nil {
		if len(strings.TrimSpace(string(raw))) != 0 {
			s.t.Errorf("%s: unexpected body %s", where, raw)
		}
		return
	}
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/json") {
		s.t.Errorf("%s: Content-Type %q, want application/json", where, mt)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		s.t.Errorf("%s: body is not a JSON object: %v: %s", where, err, raw)
		return
	}
	if !ex.Loose {
		if !reflect.DeepEqual(got, ex.Body) {
			s.t.Errorf("%s: body %s, want %v", where, raw, ex.Body)
		}
		return
	}
	for k, v := range ex.Body {
		if !reflect.DeepEqual(got[k], v) {
			s.t.Errorf("%s: body field %q is %#v, want %#v", where, k, got[k], v)
		}
	}
	var extra []string
	for k, v := range got {
		if _, ok := ex.Body[k]; !ok && !zero(v) {
			extra = append(extra, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		s.t.Errorf("%s: body sets fields that should be left alone: %s", where, strings.Join(extra, ", "))
	}
}

func zero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
