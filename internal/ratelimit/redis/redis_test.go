package redis_test

import (
	"testing"

	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/ratelimit/redis"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestStore runs the conformance suite's rate-limit cases against a real
// Redis, each under a key prefix of its own.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.RunRateLimit(t, func(t *testing.T) ratelimit.Store {
		url, prefix := storetest.RedisURL(t)
		s, err := redis.Open(t.Context(), url, prefix)
		if err != nil {
			t.Fatalf("open redis store: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close redis store: %v", err)
			}
		})
		return s
	})
}
