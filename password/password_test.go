package password

import (
	"strings"
	"sync"
	"testing"
)

func TestPassword(t *testing.T) {
	h := Hash("correct horse battery")
	if !strings.HasPrefix(string(h), "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s", h)
	}
	if p, ok := parsePHC(string(h)); !ok || p.memory != argonMemory || p.time != argonTime || p.threads != argonThreads || len(p.salt) != argonSaltLen || len(p.key) != argonKeyLen {
		t.Errorf("a hash made here does not parse back: %+v, %v", p, ok)
	}
	if string(Hash("correct horse battery")) == string(h) {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
		if got := Matches(tc.pw, h); got != tc.want {
			t.Errorf("%q matches: %v", tc.pw, got)
		}
	}
	if Matches("x", []byte("$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")) {
		t.Error("an unbounded hash matched")
	}
	for _, tc := range []struct {
		pw string
		ok bool
	}{{"elevenchars", false}, {"twelve chars", true}, {"ééééééééééé", false}, {"éééééééééééé", true}, {strings.Repeat("a", 1025), false}, {"\xff" + strings.Repeat("a", 12), false}, {"\ufffd" + strings.Repeat("a", 12), false}} {
		if err := Valid(tc.pw); (err == nil) != tc.ok {
			t.Errorf("Valid(%q) = %v", tc.pw, err)
		}
	}
}

// At most maxHashing hashes are computed at once, however many sign in.
func TestHashingBounded(t *testing.T) {
	var wg sync.WaitGroup
	peak := 0
	var mu sync.Mutex
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			peak = max(peak, len(hashing))
			mu.Unlock()
		}
	}()
	for range 3 * maxHashing {
		wg.Go(func() { Hash("correct horse battery") })
	}
	wg.Wait()
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	if peak > maxHashing || peak == 0 {
		t.Errorf("peak of %d hashes at once, bound %d", peak, maxHashing)
	}
}

// FuzzParsePHC parses arbitrary password hashes: it never panics, and it
// accepts only bounded parameters.
func FuzzParsePHC(f *testing.F) {
	f.Add(string(Hash("correct horse battery")))
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")
	f.Add("$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdA$aGFzaA")
	f.Add("$argon2i$v=19$m=1,t=1,p=1$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parsePHC(s)
		if !ok {
			return
		}
		if p.memory > 1<<20 || p.time > 16 || p.threads > 16 || len(p.key) > 64 || len(p.salt) > 64 {
			t.Fatalf("unbounded parameters accepted: %q", s)
		}
	})
}
