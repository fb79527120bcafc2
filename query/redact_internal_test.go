package query

import (
	"math/rand/v2"
	"testing"
)

// Redact's shortcut leaves a query as it is only where the whole split
// would have: over random queries spelled with the letters of "token",
// its escapes and the separators, every one the shortcut passes is one
// redact leaves unchanged.
func TestRedactShortcut(t *testing.T) {
	const alphabet = "tokenTOKEN%46bB5F2=&;/+xa"
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 24)
	passed := 0
	for range 200_000 {
		buf = buf[:0]
		for range 1 + r.IntN(23) {
			buf = append(buf, alphabet[r.IntN(len(alphabet))])
		}
		raw := string(buf)
		if mayNameToken(raw) {
			continue
		}
		passed++
		if got := redact(raw); got != raw {
			t.Fatalf("the shortcut passes %q, which redact makes %q", raw, got)
		}
	}
	if passed < 1000 {
		t.Fatalf("only %d queries passed the shortcut: the test tries too few", passed)
	}
}
