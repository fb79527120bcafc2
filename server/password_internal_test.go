package server

import (
	"strings"
	"sync"
	"testing"
)

func TestPassword(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !strings.HasPrefix(string(h), "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s", h)
	}
	if string(HashPassword("correct horse battery")) == string(h) {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
		if got := passwordMatches(tc.pw, h); got != tc.want {
			t.Errorf("%q matches: %v", tc.pw, got)
		}
	}
	if passwordMatches("x", []byte("$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")) {
		t.Error("an unbounded hash matched")
	}
	for _, tc := range []struct {
		pw string
		ok bool
	}{{"elevenchars", false}, {"twelve chars", true}, {"ééééééééééé", false}, {"éééééééééééé", true}, {strings.Repeat("a", 1025), false}, {"\xff" + strings.Repeat("a", 12), false}} {
		if err := validPassword(tc.pw); (err == nil) != tc.ok {
			t.Errorf("validPassword(%q) = %v", tc.pw, err)
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
		wg.Go(func() { HashPassword("correct horse battery") })
	}
	wg.Wait()
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	if peak > maxHashing || peak == 0 {
		t.Errorf("peak of %d hashes at once, bound %d", peak, maxHashing)
	}
}
