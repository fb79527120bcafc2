package server

import (
	"fmt"
	"testing"
	"time"
)

// A refused upstream is logged once a minute for each project and address,
// whatever its clients send, and the keys kept are bounded.
func TestOnceAMinute(t *testing.T) {
	var o onceAMinute
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"p 127.0.0.1:80", 0, true},
		{"p 127.0.0.1:80", time.Second, false},
		{"q 127.0.0.1:80", time.Second, true},
		{"p 127.0.0.1:80", 59 * time.Second, false},
		{"p 127.0.0.1:80", time.Minute, true},
	} {
		if got := o.due(tc.key, t0.Add(tc.at)); got != tc.want {
			t.Errorf("%s at %v: %v, want %v", tc.key, tc.at, got, tc.want)
		}
	}
	for i := range 3 * maxLogKeys {
		o.due(fmt.Sprint(i), t0)
	}
	if n := len(o.last); n > maxLogKeys {
		t.Errorf("%d keys kept, want at most %d", n, maxLogKeys)
	}
}
