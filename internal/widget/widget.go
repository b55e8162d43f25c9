// Package widget serves the chat widget: the script a docs site embeds with
// one <script> tag. The bundle is built from web/widget (make widget) and
// committed under dist/, so building docsmith needs only Go.
package widget

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

//go:embed dist/widget.js
var bundle []byte

const (
	// contentType is the one JavaScript media type (RFC 9239).
	contentType = "text/javascript; charset=utf-8"
	// shortCache is how long a browser or CDN may keep /widget.js before it
	// asks again: an upgrade reaches every site within this time.
	shortCache = "public, max-age=300, stale-while-revalidate=86400"
	// immutableCache is for the content-addressed path, whose bytes never change.
	immutableCache = "public, max-age=31536000, immutable"
)

// Bundle is one build of the widget script.
type Bundle struct {
	body    []byte
	gzipped []byte // body compressed once, for clients that accept gzip
	hash    string // first 16 hex digits of the SHA-256 of body
	modTime time.Time
}

// Embedded returns the bundle compiled into this binary.
func Embedded() *Bundle { return New(bundle) }

// New wraps a script.
func New(body []byte) *Bundle {
	sum := sha256.Sum256(body)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level cannot fail
	_, _ = zw.Write(body)                                   // writes to memory cannot fail
	_ = zw.Close()
	return &Bundle{body: body, gzipped: gz.Bytes(), hash: hex.EncodeToString(sum[:])[:16]}
}

// Hash identifies the bundle's bytes.
func (b *Bundle) Hash() string { return b.hash }

// Path is the bundle's content-addressed path, which may be cached forever.
func (b *Bundle) Path() string { return "/widget/" + b.hash + ".js" }

// Latest serves /widget.js: the current bundle with a short cache, so a
// site's one script tag picks up a new version without changing.
func (b *Bundle) Latest(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", shortCache)
	w.Header().Set("Link", "<"+b.Path()+">; rel=\"canonical\"")
	b.serve(w, r)
}

// Hashed serves /widget/{file}: the bundle when file is its hash plus .js,
// cached for a year; 404 for any other name (an old hash included, so a
// stale page falls back to nothing rather than to different code).
func (b *Bundle) Hashed(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSuffix(r.PathValue("file"), ".js") != b.hash || !strings.HasSuffix(r.PathValue("file"), ".js") {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "no widget build at " + r.URL.Path + "; the current one is /widget.js"})
		return
	}
	w.Header().Set("Cache-Control", immutableCache)
	b.serve(w, r)
}

func (b *Bundle) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Any site may load the script (that is its purpose); the assistant
	// endpoints decide which origins may talk to them.
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Add("Vary", "Accept-Encoding")
	body, etag := b.body, `"`+b.hash+`"`
	if acceptsGzip(r) {
		body, etag = b.gzipped, `"`+b.hash+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	// ServeContent answers If-None-Match, HEAD and ranges.
	http.ServeContent(w, r, "widget.js", b.modTime, bytes.NewReader(body))
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") {
				q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
				return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
			}
		}
	}
	return false
}
