package main

import (
	"strings"
	"testing"
)

// No password of a database or Redis URL reaches the logs.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"postgres://decoy:pgsekret@db:5432/decoy?sslmode=disable", "postgres://decoy:xxxxx@db:5432/decoy?sslmode=disable"},
		{"postgres://decoy@db/decoy?password=pgsekret&sslmode=require", "postgres://decoy@db/decoy?password=xxxxx&sslmode=require"},
		{"redis+sentinel://:mpw@s1:26379,s2:26379/main?sentinel_password=sentinelsekret", "redis+sentinel://:xxxxx@s1:26379,s2:26379/main?sentinel_password=xxxxx"},
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
	} {
		got := redactURL(tc.in)
		if got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "sekret") {
			t.Errorf("redactURL(%q) leaks a secret: %q", tc.in, got)
		}
	}
}
