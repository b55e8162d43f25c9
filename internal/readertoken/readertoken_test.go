package readertoken

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef-tern")
	now    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

func sign(t *testing.T, method jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerify(t *testing.T) {
	t.Parallel()
	valid := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"aud": "tern", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "sub": "reader-7", "groups": []string{"admins", "staff"}}
		if edit != nil {
			edit(c)
		}
		return c
	}
	good := sign(t, jwt.SigningMethodHS256, secret, valid(nil))
	head, rest, _ := strings.Cut(good, ".")
	payload, sig, _ := strings.Cut(rest, ".")
	tamperedClaims := valid(func(c jwt.MapClaims) { c["groups"] = []string{"owners"} })
	tampered := head + "." + strings.Split(sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-thirty-two-bytes!!"), tamperedClaims), ".")[1] + "." + sig
	none := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid(nil))
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + payload + "."

	tests := []struct {
		name    string
		token   string
		secret  []byte
		want    []string
		reason  string
		expired bool
	}{
		{name: "valid", token: good, want: []string{"admins", "staff"}},
		{name: "within the leeway after exp", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), want: []string{"admins", "staff"}},
		{name: "audience list naming the domain", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["aud"] = []string{"other", "tern"} })), want: []string{"admins", "staff"}},
		{name: "expired", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })), reason: "expired", expired: true},
		{name: "no exp", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { delete(c, "exp") })), reason: `no "exp"`},
		{name: "other domain", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["aud"] = "globex-site" })), reason: "not for this domain"},
		{name: "no audience", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { delete(c, "aud") })), reason: "not for this domain"},
		{name: "not yet valid", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })), reason: "not valid yet"},
		{name: "issued in the future", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })), reason: "not valid yet"},
		{name: "tampered claims", token: tampered, reason: "signature does not match"},
		{name: "other secret", token: good, secret: []byte("ffffffffffffffffffffffffffffffff"), reason: "signature does not match"},
		{name: "alg none", token: none, reason: "HS256"},
		{name: "alg none keeping the claims", token: noneHeader, reason: "HS256"},
		{name: "HS512", token: sign(t, jwt.SigningMethodHS512, secret, valid(nil)), reason: "HS256"},
		{name: "groups not a list", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["groups"] = "admins" })), reason: "not a JWT"},
		{name: "empty group", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["groups"] = []string{""} })), reason: `"groups"`},
		{name: "too many groups", token: sign(t, jwt.SigningMethodHS256, secret, valid(func(c jwt.MapClaims) { c["groups"] = make([]string, MaxGroups+1) })), reason: `"groups"`},
		{name: "not a JWT", token: "hello", reason: "not a JWT"},
		{name: "too long", token: strings.Repeat("a", MaxBytes+1), reason: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := secret
			if tt.secret != nil {
				key = tt.secret
			}
			r, err := Verify(tt.token, key, "tern", now)
			if tt.reason == "" {
				if err != nil || !slices.Equal(r.Groups, tt.want) || r.Subject != "reader-7" {
					t.Fatalf("Verify = %+v, %v; want groups %q", r, err, tt.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, tt.reason) || e.Expired != tt.expired {
				t.Fatalf("Verify error = %#v; want a refusal containing %q (expired %v)", err, tt.reason, tt.expired)
			}
		})
	}
}

func TestVerifyRefusesAShortSecret(t *testing.T) {
	t.Parallel()
	short := []byte("too-short")
	token := sign(t, jwt.SigningMethodHS256, short, jwt.MapClaims{"aud": "tern", "exp": now.Add(time.Hour).Unix()})
	_, err := Verify(token, short, "tern", now)
	var e *Error
	if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("Verify with a short secret = %v; want an operator error", err)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJ0ZXJuIn0.c2ln")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		if _, err := Verify(token, secret, "tern", now); err == nil {
			t.Fatalf("a token not signed with the secret was accepted: %q", token)
		}
	})
}
