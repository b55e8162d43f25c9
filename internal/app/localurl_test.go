package app

import "testing"

func TestLocalURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:8080":     "http://127.0.0.1:8080",
		"0.0.0.0:8080":       "http://127.0.0.1:8080",
		"[::]:8080":          "http://127.0.0.1:8080",
		":8080":              "http://127.0.0.1:8080",
		"[::1]:9000":         "http://[::1]:9000",
		"docs.example:443":   "http://docs.example:443",
		"192.168.1.20:18080": "http://192.168.1.20:18080",
		"not an address":     "http://not an address",
	} {
		if got := localURL(addr); got != want {
			t.Errorf("localURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
