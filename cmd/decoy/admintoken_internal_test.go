package main

import (
	"context"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
)

// conflicting is a store on which another replica stored its generated
// admin token first.
type conflicting struct{ store }

func (conflicting) SetAdminTokenHash(context.Context, []byte) error {
	return decoy.Errorf(decoy.ECONFLICT, "An admin token is stored already")
}

// A replica that generated a token while another stored its own fails its
// start, rather than serve with a token nobody knows.
func TestStoreAdminTokenConflict(t *testing.T) {
	m := &Main{store: conflicting{}}
	err := m.storeAdminToken(context.Background(), []byte("hash"))
	if err == nil || !strings.Contains(err.Error(), "start this one again") {
		t.Errorf("got %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"./decoy-data":                     "./decoy-data",
		"/var/lib/decoy":                   "/var/lib/decoy",
		"postgres://u:xxxxx@db:5432/decoy": "postgres://u:xxxxx@db:5432/decoy",
		"my data":                          "'my data'",
		"it's":                             `'it'\''s'`,
		"postgres://db/d?sslmode=require&search_path=x": "'postgres://db/d?sslmode=require&search_path=x'",
		"": "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
