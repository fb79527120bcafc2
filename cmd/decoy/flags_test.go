package main

import (
	"io"
	"os"
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

// --max-open-documents defaults to 1024, is read from
// DECOY_MAX_OPEN_DOCUMENTS when not given, and takes 0 (no bound) but not
// less.
func TestMaxOpenDocumentsFlag(t *testing.T) {
	parse := func(args ...string) (int, error) {
		m := NewMain(io.Discard, io.Discard)
		err := m.ParseFlags(args)
		return m.Config.MaxOpenDocuments, err
	}
	t.Setenv("DECOY_MAX_OPEN_DOCUMENTS", "")
	os.Unsetenv("DECOY_MAX_OPEN_DOCUMENTS")
	if n, err := parse(); err != nil || n != 1024 {
		t.Errorf("default: %d, %v", n, err)
	}
	if n, err := parse("--max-open-documents", "0"); err != nil || n != 0 {
		t.Errorf("0: %d, %v", n, err)
	}
	if _, err := parse("--max-open-documents", "-1"); err == nil {
		t.Error("-1 accepted")
	}
	t.Setenv("DECOY_MAX_OPEN_DOCUMENTS", "16")
	if n, err := parse(); err != nil || n != 16 {
		t.Errorf("from the environment: %d, %v", n, err)
	}
	if n, err := parse("--max-open-documents", "32"); err != nil || n != 32 {
		t.Errorf("flag over the environment: %d, %v", n, err)
	}
}

// --max-versions defaults to 20, is read from DECOY_MAX_VERSIONS when not
// given, and takes 1 to 1000.
func TestMaxVersionsFlag(t *testing.T) {
	parse := func(args ...string) (int, error) {
		m := NewMain(io.Discard, io.Discard)
		err := m.ParseFlags(args)
		return m.Config.MaxVersions, err
	}
	t.Setenv("DECOY_MAX_VERSIONS", "")
	os.Unsetenv("DECOY_MAX_VERSIONS")
	if n, err := parse(); err != nil || n != 20 {
		t.Errorf("default: %d, %v", n, err)
	}
	for _, bad := range []string{"0", "-1", "1001", "x"} {
		if _, err := parse("--max-versions", bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if n, err := parse("--max-versions", "1"); err != nil || n != 1 {
		t.Errorf("1: %d, %v", n, err)
	}
	t.Setenv("DECOY_MAX_VERSIONS", "5")
	if n, err := parse(); err != nil || n != 5 {
		t.Errorf("from the environment: %d, %v", n, err)
	}
	if n, err := parse("--max-versions", "1000"); err != nil || n != 1000 {
		t.Errorf("flag over the environment: %d, %v", n, err)
	}
}

// A variable of a boolean flag that is no boolean says so, and a number's
// that is no number says that (a walkthrough read "not a number" of
// DECOY_STUDIO=maybe).
func TestEnvValueProblems(t *testing.T) {
	for _, c := range []struct{ env, value, want string }{
		{"DECOY_STUDIO", "maybe", `DECOY_STUDIO="maybe": not true or false`},
		{"DECOY_MAX_VERSIONS", "x", `DECOY_MAX_VERSIONS="x": not a number`},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			m := NewMain(io.Discard, io.Discard)
			if err := m.ParseFlags(nil); err == nil || err.Error() != c.want {
				t.Errorf("%s=%s: %v, want %s", c.env, c.value, err, c.want)
			}
		})
	}
}

// A --shutdown-timeout of 0 or less is refused, as --upstream-timeout's
// is (a walkthrough found -1s taken silently; 0 meant the default).
func TestShutdownTimeoutFlag(t *testing.T) {
	for arg, ok := range map[string]bool{"-1s": false, "0s": false, "10s": true} {
		m := NewMain(io.Discard, io.Discard)
		err := m.ParseFlags([]string{"--shutdown-timeout", arg})
		if (err == nil) != ok || err != nil && err.Error() != "--shutdown-timeout must be more than 0" {
			t.Errorf("--shutdown-timeout %s: %v", arg, err)
		}
	}
}
