// Package readertoken checks the signed tokens that tell which access groups
// a docs reader belongs to. A team's own backend issues them to its
// signed-in readers (HS256, signed with the domain's reader secret); the
// widget or an MCP client passes one along. A reader's groups come from such
// a token only, never from what the caller asserts.
package readertoken

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	// MaxBytes bounds a token: groups and a subject fit easily, and a
	// larger header is refused before any parsing.
	MaxBytes = 8 << 10
	// MinSecretBytes is the shortest secret accepted: an HMAC key should
	// be at least as long as the hash's output (RFC 7518 §3.2).
	MinSecretBytes = 32
	// Leeway absorbs clock skew between the issuer and this server on
	// exp, nbf and iat.
	Leeway = 30 * time.Second
	// MaxGroups and MaxGroupBytes bound the groups one token may carry.
	MaxGroups     = 64
	MaxGroupBytes = 200
)

// Reader is who a valid token says the reader is.
type Reader struct {
	// Subject is the token's sub: the reader's id at the issuer, if given.
	Subject string
	Groups  []string
	Expires time.Time
}

// Error is why a token was refused, in words the token's issuer can act
// on. Expired tells a token that was valid once apart, so a site knows to
// fetch a fresh one.
type Error struct {
	Reason  string
	Expired bool
}

func (e *Error) Error() string { return e.Reason }

// claims are the token's payload.
type claims struct {
	Groups []string `json:"groups"`
	jwt.RegisteredClaims
}

// Verify checks token against secret for the domain domainID at now and
// returns its reader. Only HS256 is accepted; exp is required and aud
// must name the domain, so a token for one domain fails on another.
func Verify(token string, secret []byte, domainID string, now time.Time) (Reader, error) {
	if len(secret) < MinSecretBytes {
		// The operator's mistake, reported by the caller to its log.
		return Reader{}, fmt.Errorf("reader secret is %d bytes; it needs at least %d", len(secret), MinSecretBytes)
	}
	if len(token) > MaxBytes {
		return Reader{}, &Error{Reason: fmt.Sprintf("the reader token is longer than %d bytes", MaxBytes)}
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithAudience(domainID),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithStrictDecoding(),
	)
	var c claims
	_, err := parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return secret, nil })
	if err != nil {
		return Reader{}, refusal(err)
	}
	for _, g := range c.Groups {
		if strings.TrimSpace(g) == "" || len(g) > MaxGroupBytes {
			return Reader{}, &Error{Reason: fmt.Sprintf(`the reader token's "groups" must hold names of 1 to %d bytes`, MaxGroupBytes)}
		}
	}
	if len(c.Groups) > MaxGroups {
		return Reader{}, &Error{Reason: fmt.Sprintf(`the reader token names %d groups; at most %d are accepted`, len(c.Groups), MaxGroups)}
	}
	return Reader{Subject: c.Subject, Groups: c.Groups, Expires: c.ExpiresAt.Time}, nil
}

// refusal turns the library's error into one the issuer can act on. The
// order matters: an expired token with a bad signature is a bad token.
func refusal(err error) *Error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return &Error{Reason: `the reader token is not a JWT (three base64url parts: header, claims and signature), or its "groups" is not a list of strings`}
	case errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return &Error{Reason: `the reader token must be signed with HS256 ("alg":"HS256") and the domain's reader secret`}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return &Error{Reason: "the reader token's signature does not match: sign it with this domain's reader secret, and do not change it after signing"}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "exp"):
		return &Error{Reason: `the reader token has no "exp": give it an expiry time`}
	case errors.Is(err, jwt.ErrTokenExpired):
		return &Error{Reason: "the reader token has expired; fetch a fresh one from the site's backend", Expired: true}
	case errors.Is(err, jwt.ErrTokenInvalidAudience), errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "aud"):
		return &Error{Reason: `the reader token is not for this domain: its "aud" must be the domain's id`}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return &Error{Reason: `the reader token is not valid yet ("nbf" or "iat" is in the future); check the issuer's clock`}
	}
	return &Error{Reason: "the reader token is not valid"}
}
