// Package semantictest runs local HTTP servers that speak the embeddings
// and rerank protocols with deterministic answers, for tests: vectors of
// hashed words, so texts that share words lie near each other, and scores
// of word overlap. Each server records what it was asked and can be told
// to fail in each of the ways a hosted provider does.
package semantictest

import (
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Failure is a way a provider misbehaves.
type Failure int

const (
	FailNone           Failure = iota
	FailDelay                  // answer correctly after Fault.Delay (or when the client gives up)
	FailRateLimited            // 429 with Fault.RetryAfter
	FailServer                 // 500
	FailRefused                // 401: a wrong key
	FailWrongDimension         // embeddings: vectors one dimension short; rerank: an index out of range
	FailMalformed              // a reply that is not JSON
	FailWrongCount             // one vector fewer than asked for; rerank: one result fewer (not an error: it scores lowest)
	FailNaN                    // embeddings: a non-finite number; rerank: a result without score
	FailHuge                   // a reply of Fault.HugeBytes (default 80 MiB) of valid-looking JSON
)

// Fault is how the server answers its next requests.
type Fault struct {
	Failure    Failure
	Delay      time.Duration // FailDelay
	RetryAfter string        // FailRateLimited and FailServer: the Retry-After header, if not empty
	// Times is how many requests fail before the server answers correctly
	// again; 0: all of them.
	Times     int
	HugeBytes int
}

// faults holds the current fault and counts the requests it spoiled.
type faults struct {
	mu     sync.Mutex
	fault  Fault
	failed int
}

func (f *faults) set(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.failed = fault, 0
}

// next is the fault the next request gets.
func (f *faults) next() Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault.Failure == FailNone || (f.fault.Times > 0 && f.failed >= f.fault.Times) {
		return Fault{}
	}
	f.failed++
	return f.fault
}

// answerFault writes the replies that do not depend on the protocol and
// reports whether it did; it waits out FailDelay before saying no.
func answerFault(w http.ResponseWriter, r *http.Request, fault Fault) bool {
	switch fault.Failure {
	case FailDelay:
		select {
		case <-time.After(fault.Delay):
		case <-r.Context().Done():
			return true
		}
	case FailRateLimited:
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		http.Error(w, `{"error":{"message":"rate limit reached","type":"requests"}}`, http.StatusTooManyRequests)
		return true
	case FailServer:
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		http.Error(w, `{"error":{"message":"the server had an error"}}`, http.StatusInternalServerError)
		return true
	case FailRefused:
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
		return true
	case FailMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data": [{"index": 0, "embedding": [0.1, `))
		return true
	case FailHuge:
		writeHuge(w, fault.HugeBytes)
		return true
	}
	return false
}

// writeHuge streams a JSON reply of about n bytes (default 80 MiB).
func writeHuge(w http.ResponseWriter, n int) {
	if n <= 0 {
		n = 80 << 20
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"pad":"`))
	chunk := []byte(strings.Repeat("x", 64<<10))
	for written := 0; written < n; written += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	_, _ = w.Write([]byte(`"}`))
}

// authorized checks the bearer key when the server was given one.
func authorized(w http.ResponseWriter, r *http.Request, key string) bool {
	if key == "" || r.Header.Get("Authorization") == "Bearer "+key {
		return true
	}
	http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
	return false
}

// Words are a text's lower-cased runs of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Vector is the embeddings server's vector of text: each word adds ±1 to
// a dimension its hash picks, and the sum is scaled to length 1. Texts
// without words get the first unit vector.
func Vector(text string, dims int) []float32 {
	v := make([]float64, dims)
	for _, w := range Words(text) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// Score is the rerank server's score of document for query: the share of
// the query's distinct words the document holds, from 0 to 1.
func Score(query, document string) float64 {
	q := distinct(Words(query))
	if len(q) == 0 {
		return 0
	}
	d := distinct(Words(document))
	hits := 0
	for w := range q {
		if d[w] {
			hits++
		}
	}
	return float64(hits) / float64(len(q))
}

func distinct(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
