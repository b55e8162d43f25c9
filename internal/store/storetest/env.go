package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

// The variables that point tests at real servers. Unset, the tests that
// need one are skipped; set, a server that does not answer fails them.
const (
	EnvPostgresURL = "DOCSMITH_TEST_DATABASE_URL" // postgres://…/test?sslmode=disable
	EnvRedisURL    = "DOCSMITH_TEST_REDIS_URL"    // redis://127.0.0.1:6379/0
)

// PostgresURL returns a URL of the test database whose search_path is a new,
// empty schema of its own, dropped when the test ends. Tests on it run in
// parallel without seeing each other, as River's test schemas do.
func PostgresURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(EnvPostgresURL)
	if raw == "" {
		t.Skipf("set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL tests", EnvPostgresURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL", EnvPostgresURL)
	}
	schema := "test_" + randomHex(t, 8)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, raw)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
		_, err = conn.Exec(ctx, sql)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("%s is set but PostgreSQL does not answer: %v", EnvPostgresURL, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RedisURL returns the test Redis URL and a key prefix of this test's own,
// whose keys are deleted when the test ends.
func RedisURL(t testing.TB) (redisURL, prefix string) {
	t.Helper()
	raw := os.Getenv(EnvRedisURL)
	if raw == "" {
		t.Skipf("set %s (e.g. redis://127.0.0.1:6379/0) to run the Redis tests", EnvRedisURL)
	}
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		t.Fatalf("%s: %v", EnvRedisURL, err)
	}
	client := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		t.Fatalf("%s is set but Redis does not answer: %v", EnvRedisURL, err)
	}
	prefix = "{docsmith-test-" + randomHex(t, 8) + "}:"
	t.Cleanup(func() {
		defer func() { _ = client.Close() }()
		deleteKeys(t, client, prefix)
	})
	return raw, prefix
}

// DeleteRedisKeysAtEnd deletes, when the test ends, the keys of the test
// Redis that start with prefix: those a process under test wrote under a
// prefix of its own choosing.
func DeleteRedisKeysAtEnd(t testing.TB, prefix string) {
	t.Helper()
	raw := os.Getenv(EnvRedisURL)
	if raw == "" {
		return
	}
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		t.Fatalf("%s: %v", EnvRedisURL, err)
	}
	t.Cleanup(func() {
		client := goredis.NewClient(opts)
		defer func() { _ = client.Close() }()
		deleteKeys(t, client, prefix)
	})
}

func deleteKeys(t testing.TB, client *goredis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, escapeGlob(prefix)+"*", 100).Iterator()
	for iter.Next(ctx) {
		client.Del(ctx, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("delete test keys %s*: %v", prefix, err)
	}
}

func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
