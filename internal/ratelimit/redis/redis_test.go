package redis_test

import (
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

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

// TestOneOffKeysExpire checks that Redis does not keep the hits of keys
// that are never checked again: every key carries a time to live of its
// window and a second, so it leaves Redis on its own.
func TestOneOffKeysExpire(t *testing.T) {
	t.Parallel()
	url, prefix := storetest.RedisURL(t)
	s, err := redis.Open(t.Context(), url, prefix)
	if err != nil {
		t.Fatalf("open redis store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	opts, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })

	const keys = 50
	now := time.Now()
	for i := range keys {
		rule := ratelimit.Rule{Name: "per client IP", Key: fmt.Sprintf("assistant:ip:198.51.100.%d", i), Limit: 5, Window: time.Hour}
		if ok, _, err := s.Take(t.Context(), now, "", []ratelimit.Rule{rule}); err != nil || !ok {
			t.Fatalf("take %d: allowed=%v err=%v", i, ok, err)
		}
	}
	found := 0
	iter := client.Scan(t.Context(), 0, prefix+"*", 100).Iterator()
	for iter.Next(t.Context()) {
		found++
		ttl, err := client.PTTL(t.Context(), iter.Val()).Result()
		if err != nil {
			t.Fatalf("PTTL %s: %v", iter.Val(), err)
		}
		if ttl <= 0 || ttl > time.Hour+time.Second {
			t.Errorf("key %s expires in %v, want within the hour's window and a second", iter.Val(), ttl)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	if found != keys {
		t.Fatalf("found %d keys under the prefix, want %d", found, keys)
	}
}
