// Package apikey makes and parses docsmith API keys.
//
// A key reads "svc_<id>_<secret>" (admin) or "svc_dsc_<id>_<secret>"
// (assistant). The id is not secret: the store finds the key by it. Only a
// SHA-256 hash of the whole key is stored, and it is compared in constant time.
// The secret has 256 bits of entropy, so a fast hash is enough.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"strings"
)

// Kind is the kind of a key.
type Kind string

const (
	Admin     Kind = "admin"
	Assistant Kind = "assistant"
)

// ParseKind checks a kind given by an operator.
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case Admin, Assistant:
		return Kind(s), nil
	}
	return "", errors.New(`kind must be "admin" or "assistant"`)
}

const (
	adminPrefix     = "svc_"
	assistantPrefix = "svc_dsc_"
	idLen           = 12
	secretBytes     = 32
)

// The lowercase base32 alphabet has no "_", so the parts split unambiguously.
var encoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Generated is a new key: the secret to show once, and what to store.
type Generated struct {
	ID     string
	Secret string
	Hash   []byte
}

// Generate makes a new random key of the given kind.
func Generate(kind Kind) (Generated, error) {
	idRaw := make([]byte, 8)
	secretRaw := make([]byte, secretBytes)
	if _, err := rand.Read(idRaw); err != nil {
		return Generated{}, err
	}
	if _, err := rand.Read(secretRaw); err != nil {
		return Generated{}, err
	}
	id := encoding.EncodeToString(idRaw)[:idLen]
	prefix := adminPrefix
	if kind == Assistant {
		prefix = assistantPrefix
	}
	secret := prefix + id + "_" + encoding.EncodeToString(secretRaw)
	return Generated{ID: id, Secret: secret, Hash: Hash(secret)}, nil
}

// Parsed is what can be read from a presented key without the store.
type Parsed struct {
	Kind Kind
	ID   string
}

// ErrMalformed means the string is not a docsmith key at all.
var ErrMalformed = errors.New("not a docsmith API key")

// Parse reads the kind and id of a presented key.
func Parse(key string) (Parsed, error) {
	var kind Kind
	var rest string
	switch {
	case strings.HasPrefix(key, assistantPrefix):
		kind, rest = Assistant, key[len(assistantPrefix):]
	case strings.HasPrefix(key, adminPrefix):
		kind, rest = Admin, key[len(adminPrefix):]
	default:
		return Parsed{}, ErrMalformed
	}
	id, secret, ok := strings.Cut(rest, "_")
	if !ok || len(id) != idLen || len(secret) < 50 || len(secret) > 60 || !validChars(id) || !validChars(secret) {
		return Parsed{}, ErrMalformed
	}
	return Parsed{Kind: kind, ID: id}, nil
}

func validChars(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

// Hash returns the stored form of a key.
func Hash(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// Matches reports, in constant time, whether key hashes to stored.
func Matches(key string, stored []byte) bool {
	return subtle.ConstantTimeCompare(Hash(key), stored) == 1
}
