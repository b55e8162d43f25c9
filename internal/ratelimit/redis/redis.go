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

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
)

// takeScript checks every rule and records a hit in each only if all have
// room (ratelimit.Store's contract). A rule whose key already holds the
// request's token as a member is taken already: not checked, not recorded
// again. Every key expires a second after its newest hit leaves the window,
// so keys never checked again leave Redis on their own.
//
//	KEYS[i]          the hits of rule i: members scored by time in µs
//	ARGV[1]          now, in µs since the Unix epoch
//	ARGV[2]          this call's member: the request's token ("t:…"), or
//	                 a prefix unique to this call ("n:…")
//	ARGV[3]          "1" when ARGV[2] is a token
//	ARGV[2i+2], [2i+3]  rule i's window (µs) and limit
//
// It returns {allowed (1|0), count_1, oldest_1, taken_1, count_2, …} with
// the counts before this hit, each oldest score ("" when none) and 1 for a
// rule the token had taken already.
const takeScript = `
local now = tonumber(ARGV[1])
local isToken = ARGV[3] == '1'
local out = {1}
local allowed = true
local taken = {}
for i = 1, #KEYS do
	local start = now - tonumber(ARGV[2 * i + 2])
	redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', start)
	local count = redis.call('ZCARD', KEYS[i])
	local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
	taken[i] = isToken and redis.call('ZSCORE', KEYS[i], ARGV[2]) ~= false
	out[#out + 1] = count
	out[#out + 1] = oldest[2] or ''
	out[#out + 1] = taken[i] and 1 or 0
	if not taken[i] and count >= tonumber(ARGV[2 * i + 3]) then
		allowed = false
	end
end
if not allowed then
	out[1] = 0
	return out
end
for i = 1, #KEYS do
	if not taken[i] then
		local member = ARGV[2]
		if not isToken then
			member = member .. ':' .. i
		end
		redis.call('ZADD', KEYS[i], now, member)
		redis.call('PEXPIRE', KEYS[i], math.floor(tonumber(ARGV[2 * i + 2]) / 1000) + 1000)
	end
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
func (s *Store) Take(ctx context.Context, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	member, isToken := "t:"+token, "1"
	if token == "" {
		var nonce [12]byte
		if _, err := rand.Read(nonce[:]); err != nil {
			return false, nil, fmt.Errorf("rate limit nonce: %w", err)
		}
		member, isToken = "n:"+hex.EncodeToString(nonce[:]), "0"
	}
	nowUS := now.UnixMicro()
	keys := make([]string, len(rules))
	args := make([]any, 0, 3+2*len(rules))
	args = append(args, nowUS, member, isToken)
	for i, r := range rules {
		keys[i] = s.prefix + r.Key
		args = append(args, r.Window.Microseconds(), r.Limit)
	}
	res, err := s.script.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		if ctx.Err() != nil {
			return false, nil, fmt.Errorf("rate limit script: %w", err)
		}
		// The request cannot be counted, so it is not served: the client
		// learns that Redis is the part that is down, and may retry.
		return false, nil, apperr.Wrap(err, apperr.Unavailable, "Redis, which keeps the rate limits, does not answer; the request was not served; try again shortly")
	}
	if len(res) != 1+3*len(rules) {
		return false, nil, fmt.Errorf("rate limit script returned %d values for %d rules", len(res), len(rules))
	}
	allowed := res[0] == int64(1)
	usage := make([]ratelimit.Usage, len(rules))
	for i, r := range rules {
		count, ok := res[1+3*i].(int64)
		if !ok {
			return false, nil, fmt.Errorf("rate limit script: count of %s is %T", r.Key, res[1+3*i])
		}
		usage[i] = ratelimit.Usage{Rule: r, Used: int(count), ResetIn: r.Window}
		if oldest, _ := res[2+3*i].(string); oldest != "" {
			f, err := strconv.ParseFloat(oldest, 64)
			if err != nil {
				return false, nil, fmt.Errorf("rate limit script: oldest hit of %s: %w", r.Key, err)
			}
			start := nowUS - r.Window.Microseconds()
			usage[i].ResetIn = time.Duration(int64(f)-start) * time.Microsecond
		}
		if taken := res[3+3*i] == int64(1); allowed && !taken {
			usage[i].Used++
		}
	}
	return allowed, usage, nil
}
