package testservice

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"sync"
	"testing"
	"time"
)

// shared is a server started once per test binary, on first use.
type shared struct {
	mu   sync.Mutex
	done bool // tried to start it
	s    started
	err  error
}

// started is what starting a server gave.
type started struct {
	url     string
	how     string // which binary, where, as whom
	missing string // or why there is no server to start
}

// get starts the server on first use and returns its URL. It skips t when
// there is no server to start, saying how to enable one, and fails t when
// one did not start.
func (s *shared) get(t testing.TB, what, enable string, start func() (started, error)) string {
	t.Helper()
	s.mu.Lock()
	first := !s.done
	if first {
		began := time.Now()
		s.s, s.err = start()
		s.done = true
		if s.err == nil && s.s.missing == "" {
			t.Logf("a %s of the tests' own started in %v: %s (%s)", what, time.Since(began).Round(time.Millisecond), s.s.url, s.s.how)
		}
	}
	st, err := s.s, s.err
	s.mu.Unlock()
	switch {
	case st.missing != "":
		Skip(t, what, st.missing+": "+enable)
	case err != nil:
		t.Fatalf("starting a %s for the tests: %v\n(%s)", what, err, enable)
	}
	return st.url
}

// stoppers are the shared servers started for this test binary, stopped by
// Main after the tests.
var (
	stoppersMu sync.Mutex
	stoppers   []func()
)

func atEnd(stop func()) {
	stoppersMu.Lock()
	defer stoppersMu.Unlock()
	stoppers = append(stoppers, stop)
}

func stopAll() {
	stoppersMu.Lock()
	defer stoppersMu.Unlock()
	for _, stop := range stoppers {
		stop()
	}
	stoppers = nil
}

// sparePort returns a loopback port nothing listens on now. Another process
// may take it before the server does; a server that cannot bind it is
// started again on another.
func sparePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// account is a user to run a server as.
type account struct {
	name     string
	uid, gid uint32
}

// suffix is " as name", or "" for no account.
func (a *account) suffix() string {
	if a == nil {
		return ""
	}
	return " as " + a.name
}

// unprivileged returns the account a server that refuses to run as root
// (PostgreSQL) runs as when the tests run as root, or nil when they do not.
func unprivileged() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("the tests run as root, and there is no user nobody to run PostgreSQL as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user nobody has uid %q, gid %q", u.Uid, u.Gid)
	}
	return &account{name: u.Username, uid: uint32(uid), gid: uint32(gid)}, nil
}
