package jsondoc

import (
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// ETag returns the strong entity tag of a body: its 64-bit xxhash in hex,
// quoted.
func ETag(body []byte) string {
	d := xxhash.New()
	d.Write(body)
	return ETagOfDigest(d)
}

// ETagOfDigest returns the entity tag of what d digested.
func ETagOfDigest(d *xxhash.Digest) string {
	var sum [8]byte
	return `"` + hex.EncodeToString(d.Sum(sum[:0])) + `"`
}
