// Package password hashes and checks passwords: argon2id, in the PHC string
// form, compared in constant time, with a bound on the hashes computed at
// once.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"golang.org/x/crypto/argon2"
)

// Passwords are kept as argon2id hashes in the PHC string form
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash), so that the parameters can be
// raised later and old hashes still checked.

// Password bounds: long enough to resist guessing, short enough that
// hashing one is bounded work.
const (
	MinLength = 12
	maxBytes  = 1024
)

// argon2id parameters of new hashes: 19 MiB, 2 passes, 1 lane (the
// OWASP baseline), about 30 ms on one core.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// maxHashing bounds the argon2id hashes computed at once: each takes
// argonMemory, so that a crowd signing in at once cannot take the server's
// memory; the others wait their turn.
const maxHashing = 4

// hashing holds a slot per hash being computed.
var hashing = make(chan struct{}, maxHashing)

// idKey is argon2.IDKey in one of the maxHashing slots.
func idKey(pw, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	hashing <- struct{}{}
	defer func() { <-hashing }()
	return argon2.IDKey(pw, salt, time, memory, threads, keyLen)
}

// Valid checks that a password is UTF-8 of the right length, without
// U+FFFD: JSON decoding makes one of each lone surrogate escape ("\ud800"),
// so that passwords differing only in those would be the same. As no
// password set holds one, a password tried that holds one matches none.
func Valid(pw string) error {
	if utf8.RuneCountInString(pw) < MinLength || len(pw) > maxBytes || !utf8.ValidString(pw) {
		return decoy.Errorf(decoy.EINVALID, "password must be from %d characters to %d bytes of UTF-8", MinLength, maxBytes)
	}
	if strings.ContainsRune(pw, utf8.RuneError) {
		return decoy.Errorf(decoy.EINVALID, "password must not hold U+FFFD, the replacement character, which a lone UTF-16 surrogate escape also decodes to")
	}
	return nil
}

// Hash returns the argon2id hash of a password in PHC string form.
func Hash(pw string) []byte {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never, on supported platforms
	}
	key := idKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Appendf(nil, "$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// phc is a parsed argon2id hash.
type phc struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// parsePHC parses an argon2id hash in PHC string form; it refuses
// parameters past what a server would ever set, so that a hash does not
// make a check cost unbounded memory or time.
func parsePHC(s string) (phc, bool) {
	var p phc
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, false
	}
	var threads uint32
	if n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &threads); err != nil || n != 3 ||
		fmt.Sprintf("m=%d,t=%d,p=%d", p.memory, p.time, threads) != parts[3] {
		return p, false
	}
	if p.memory < 8 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || threads < 1 || threads > 16 {
		return p, false
	}
	p.threads = uint8(threads)
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < 8 || len(p.salt) > 64 {
		return p, false
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return p, false
	}
	return p, true
}

// Matches checks a password against a stored hash, in constant time. A
// hash that does not parse matches nothing.
func Matches(pw string, hash []byte) bool {
	p, ok := parsePHC(string(hash))
	if !ok {
		return false
	}
	key := idKey([]byte(pw), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1
}

// MatchesNone takes as long as Matches and matches nothing: it is called
// when no user has the email given, so that a sign-in takes as long whether
// the email is known or not.
func MatchesNone(pw string) {
	Matches(pw, dummyHash())
}

var dummyHash = sync.OnceValue(func() []byte { return Hash("decoy: no user has this email") })
