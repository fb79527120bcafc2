// Package secret makes and checks the secrets Decoy hands out: mock
// tokens, personal access tokens, API keys and invitations. A secret is a
// prefix that says what it is for and 256 random bits; only its SHA-256 is
// kept, and a secret presented is compared with that in constant time.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// Length is the length of a secret after its prefix: 256 bits in
// base64url.
const Length = 43

// New returns a new random secret: prefix followed by 256 random bits in
// base64url (Length characters).
func New(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program rather
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Hash returns the SHA-256 of a secret, the only form secrets are kept in.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Matches compares a secret presented with a stored hash in constant time.
func Matches(secret string, hash []byte) bool {
	return len(hash) == sha256.Size && subtle.ConstantTimeCompare(Hash(secret), hash) == 1
}
