package widget_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/widget"
)

func TestServe(t *testing.T) {
	t.Parallel()
	b := widget.Embedded()
	if !bytes.HasPrefix(mustRead(t, b, "/widget.js", nil).body, []byte("(function(")) {
		t.Fatal("the embedded bundle is not the built IIFE script; run make widget")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /widget.js", b.Latest)
	mux.HandleFunc("GET /widget/{file}", b.Hashed)
	tests := []struct {
		name      string
		path      string
		header    map[string]string
		status    int
		cache     string
		encoding  string
		wantBytes bool
	}{
		{name: "latest", path: "/widget.js", status: 200, cache: "public, max-age=300, stale-while-revalidate=86400", wantBytes: true},
		{name: "latest gzip", path: "/widget.js", header: map[string]string{"Accept-Encoding": "br, gzip"}, status: 200, cache: "public, max-age=300, stale-while-revalidate=86400", encoding: "gzip", wantBytes: true},
		{name: "gzip refused", path: "/widget.js", header: map[string]string{"Accept-Encoding": "gzip;q=0"}, status: 200, cache: "public, max-age=300, stale-while-revalidate=86400", wantBytes: true},
		{name: "hashed", path: b.Path(), status: 200, cache: "public, max-age=31536000, immutable", wantBytes: true},
		{name: "revalidated", path: "/widget.js", header: map[string]string{"If-None-Match": `"` + b.Hash() + `"`}, status: 304, cache: "public, max-age=300, stale-while-revalidate=86400"},
		{name: "old hash", path: "/widget/0123456789abcdef.js", status: 404, cache: "no-store"},
		{name: "hash without .js", path: "/widget/" + b.Hash(), status: 404, cache: "no-store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tt.status || res.Header.Get("Cache-Control") != tt.cache {
				t.Fatalf("status %d cache %q, want %d %q", res.StatusCode, res.Header.Get("Cache-Control"), tt.status, tt.cache)
			}
			if !tt.wantBytes {
				return
			}
			if got := res.Header.Get("Content-Type"); got != "text/javascript; charset=utf-8" {
				t.Errorf("Content-Type %q", got)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Content-Encoding") != tt.encoding {
				t.Errorf("headers %v", res.Header)
			}
			var body io.Reader = res.Body
			if tt.encoding == "gzip" {
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			got, _ := io.ReadAll(body)
			if !bytes.Equal(got, mustRead(t, b, "/widget.js", nil).body) {
				t.Error("served bytes differ from the bundle")
			}
		})
	}
}

type served struct{ body []byte }

func mustRead(t *testing.T, b *widget.Bundle, path string, header http.Header) served {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	b.Latest(rec, req)
	return served{body: rec.Body.Bytes()}
}

func TestHashFollowsBytes(t *testing.T) {
	t.Parallel()
	a, b := widget.New([]byte("a")), widget.New([]byte("b"))
	if a.Hash() == b.Hash() || !strings.HasPrefix(a.Path(), "/widget/") || len(a.Hash()) != 16 {
		t.Fatalf("hashes %s %s path %s", a.Hash(), b.Hash(), a.Path())
	}
}
