package secret_test

import (
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/secret"
)

func TestNewHashMatches(t *testing.T) {
	a, b := secret.New("dcy_"), secret.New("dcy_")
	if !strings.HasPrefix(a, "dcy_") || len(a) != len("dcy_")+secret.Length {
		t.Fatalf("New = %q: want dcy_ and %d characters", a, secret.Length)
	}
	if a == b {
		t.Fatal("two secrets alike")
	}
	h := secret.Hash(a)
	tests := []struct {
		name   string
		secret string
		hash   []byte
		want   bool
	}{
		{"the secret", a, h, true},
		{"another secret", b, h, false},
		{"the secret, one character short", a[:len(a)-1], h, false},
		{"empty hash", a, nil, false},
		{"a hash cut short", a, h[:31], false},
	}
	for _, tc := range tests {
		if got := secret.Matches(tc.secret, tc.hash); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
