// Package redis keeps docsmith's rate limits in Redis, so that replicas
// share them without a round of database transactions per request. It
// implements ratelimit.Store with the same sliding windows as the SQL
// stores: a sorted set of hits per key, checked and recorded for every
// rule of a request in one Lua script, which Redis runs atomically.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// takeScript checks every rule and records a hit in each only if all have
// room (ratelimit.Store's contract).
//
//	KEYS[i]          the hits of rule i: members scored by time in µs
//	ARGV[1]          now, in µs since the Unix epoch
//	ARGV[2]          a prefix for this call's members, unique per call
//	ARGV[2i+1], [2i+2]  rule i's window (µs) and limit
//
// It returns {allowed (1|0), count_1, oldest_1, count_2, oldest_2, …} with
// the counts before this hit and each oldest score ("" when none).
const takeScript = `
local now = tonumber(ARGV[1])
local out = {1}
local allowed = true
for i = 1, #KEYS do
	local start = now - tonumber(ARGV[2 * i + 1])
	redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', start)
	local count = redis.call('ZCARD', KEYS[i])
	local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
	out[#out + 1] = count
	out[#out + 1] = oldest[2] or ''
	if count >= tonumber(ARGV[2 * i + 2]) then
		allowed = false
	end
end
if not allowed then
	out[1] = 0
	return out
end
for i = 1, #KEYS do
	redis.call('ZADD', KEYS[i], now, ARGV[2] .. ':' .. i)
	redis.call('PEXPIRE', KEYS[i], math.floor(tonumber(ARGV[2 * i + 1]) / 1000) + 1000)
end
return out
`

// Store is a ratelimit.Store in Redis.
type Store struct {
	client goredis.UniversalClient
	prefix string
	script *goredis.Script
}

var _ ratelimit.Store = (*Store)(nil)

// New returns a Store over client. Every key is prefix + the rule's key;
// replicas of one deployment must use the same prefix, and another
// deployment on the same Redis another one. A prefix of the form
// "{name}:…" keeps all keys in one Redis Cluster slot, as the script needs.
func New(client goredis.UniversalClient, prefix string) *Store {
	return &Store{client: client, prefix: prefix, script: goredis.NewScript(takeScript)}
}

// Open connects to the Redis at url (redis://[user:password@]host:port/db,
// rediss:// for TLS) and checks that it answers.
func Open(ctx context.Context, url, prefix string) (*Store, error) {
	opts, err := goredis.ParseURL(url)
	if err != nil {
		// The parser's message may repeat the URL, password and all.
		return nil, errors.New("the redis URL is not valid: use redis://[user:password@]host:port/db or rediss:// for TLS")
	}
	client := goredis.NewClient(opts)
	s := New(client, prefix)
	if err := s.Ping(ctx); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	return s, nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.client.Ping(ctx).Err()
}

// Close closes the client.
func (s *Store) Close() error { return s.client.Close() }

// Take counts, for each rule, the hits of its key in (now-window, now]; if
// every rule has room it records one hit for each. Both happen in one
// script, so replicas taking from the same key at once are counted exactly.
func (s *Store) Take(ctx context.Context, now time.Time, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return false, nil, fmt.Errorf("rate limit nonce: %w", err)
	}
	nowUS := now.UnixMicro()
	keys := make([]string, len(rules))
	args := make([]any, 0, 2+2*len(rules))
	args = append(args, nowUS, hex.EncodeToString(nonce[:]))
	for i, r := range rules {
		keys[i] = s.prefix + r.Key
		args = append(args, r.Window.Microseconds(), r.Limit)
	}
	res, err := s.script.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		return false, nil, fmt.Errorf("rate limit script: %w", err)
	}
	if len(res) != 1+2*len(rules) {
		return false, nil, fmt.Errorf("rate limit script returned %d values for %d rules", len(res), len(rules))
	}
	allowed := res[0] == int64(1)
	usage := make([]ratelimit.Usage, len(rules))
	for i, r := range rules {
		count, ok := res[1+2*i].(int64)
		if !ok {
			return false, nil, fmt.Errorf("rate limit script: count of %s is %T", r.Key, res[1+2*i])
		}
		usage[i] = ratelimit.Usage{Rule: r, Used: int(count), ResetIn: r.Window}
		if oldest, _ := res[2+2*i].(string); oldest != "" {
			f, err := strconv.ParseFloat(oldest, 64)
			if err != nil {
				return false, nil, fmt.Errorf("rate limit script: oldest hit of %s: %w", r.Key, err)
			}
			start := nowUS - r.Window.Microseconds()
			usage[i].ResetIn = time.Duration(int64(f)-start) * time.Microsecond
		}
		if allowed {
			usage[i].Used++
		}
	}
	return allowed, usage, nil
}
