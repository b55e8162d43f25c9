package forgeapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestClientCutsLongReplies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	t.Cleanup(srv.Close)
	mine := srv.Client()
	transport := mine.Transport
	client := Config{HTTPClient: mine}.Client()
	if mine.Transport != transport {
		t.Fatal("Client changed the caller's http.Client")
	}
	if lt, ok := client.Transport.(limitTransport); !ok || lt.max != MaxReply {
		t.Fatalf("Client's transport is %#v, want a limitTransport of MaxReply", client.Transport)
	}
	client.Transport = limitTransport{rt: transport, max: 16}
	tests := []struct {
		name    string
		n       int
		wantErr string
	}{
		{"small", 10, ""},
		{"exactly the limit", 16, ""},
		{"one byte more", 17, "the reply is longer than 16 bytes"},
		{"much more", 100000, "the reply is longer than 16 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := client.Get(srv.URL + "?n=" + strconv.Itoa(tt.n))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			switch {
			case tt.wantErr == "" && (err != nil || len(b) != tt.n):
				t.Errorf("read %d bytes, %v; want %d", len(b), err, tt.n)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("read %d bytes, %v; want an error saying %q", len(b), err, tt.wantErr)
			}
		})
	}
}
