package testservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresURL returns the URL of a PostgreSQL the test may create schemas
// in: DECOY_TEST_POSTGRES_URL, or else a private server for this test
// binary, started on first use. Without either, it skips the test. The
// server is shared: a test keeps to a schema of its own.
func PostgresURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("DECOY_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return postgres.get(t, "PostgreSQL", "apt-get install postgresql, or set DECOY_TEST_POSTGRES_URL", startPostgres)
}

var postgres shared

// postgresGlob is where Debian installs each major version's binaries,
// off PATH.
const postgresGlob = "/usr/lib/postgresql/*/bin"

// postgresBinDir returns the directory holding initdb and postgres: that of
// initdb on PATH, else the newest of those glob matches.
func postgresBinDir(glob string) (string, bool) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), true
	}
	dirs, _ := filepath.Glob(glob)
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "initdb"))
		return err != nil
	})
	if len(dirs) == 0 {
		return "", false
	}
	return slices.MaxFunc(dirs, func(a, b string) int { return compareVersions(versionOf(a), versionOf(b)) }), true
}

// versionOf is the version in a path such as /usr/lib/postgresql/9.6/bin.
func versionOf(binDir string) string { return filepath.Base(filepath.Dir(binDir)) }

// compareVersions compares dotted versions number by number: 9.6 < 15.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// startPostgres initialises a cluster in a temporary directory and starts
// it on a spare port, as an unprivileged user when the tests run as root
// (PostgreSQL refuses root).
func startPostgres() (started, error) {
	bin, ok := postgresBinDir(postgresGlob)
	if !ok {
		return started{missing: "no initdb found on PATH or in " + postgresGlob}, nil
	}
	as, err := unprivileged()
	if err != nil {
		return started{}, err
	}
	dir, err := os.MkdirTemp("", "decoy-test-postgres-")
	if err != nil {
		return started{}, err
	}
	fail := func(err error) (started, error) {
		os.RemoveAll(dir)
		return started{}, err
	}
	if as != nil {
		if err := os.Chown(dir, int(as.uid), int(as.gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	// Trust on loopback, and no fsync: the cluster lives as long as the
	// tests, and a crash of the machine loses nothing worth keeping.
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--no-sync", "--no-locale", "-E", "UTF8")
	initdb.Dir = dir
	if initdb.SysProcAttr, err = procAttr(as, syscall.SIGKILL); err != nil {
		return fail(err)
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		if as != nil {
			out = fmt.Appendf(out, "(initdb ran as %s, who must be able to reach %s: check TMPDIR)\n", as.name, dir)
		}
		return fail(fmt.Errorf("%s: %v\n%s", initdb, err, out))
	}
	for attempt := 0; ; attempt++ {
		port, err := sparePort()
		if err != nil {
			return fail(err)
		}
		stop, err := runPostgres(bin, dir, data, port, as)
		if err == nil {
			atEnd(func() { stop(); os.RemoveAll(dir) })
			return started{
				url: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
				how: fmt.Sprintf("%s/postgres in %s%s", bin, dir, as.suffix()),
			}, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == 2 {
			return fail(err)
		}
	}
}

var errPortTaken = errors.New("port taken")

// runPostgres starts the server on port and waits until it accepts
// connections. It returns the function that stops it.
func runPostgres(bin, dir, data string, port int, as *account) (stop func(), err error) {
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", // TCP only: no socket file in a shared directory
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off")
	cmd.Dir = dir
	logFile, err := os.Create(filepath.Join(dir, fmt.Sprintf("postgres-%d.log", port)))
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the server has its own copy
	cmd.Stdout, cmd.Stderr = logFile, logFile
	log := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	// SIGQUIT, not SIGKILL, if the tests die: the server then stops its
	// own processes.
	if cmd.SysProcAttr, err = procAttr(as, syscall.SIGQUIT); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop = func() {
		cmd.Process.Signal(syscall.SIGINT) // fast shutdown: ends the sessions left
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", port)
	for deadline := time.Now().Add(time.Minute); ; {
		conn, err := pgx.Connect(context.Background(), url)
		if err == nil {
			conn.Close(context.Background())
			return stop, nil
		}
		select {
		case <-exited:
			if strings.Contains(log(), "could not bind") || strings.Contains(log(), "could not create any TCP/IP sockets") {
				return nil, errPortTaken
			}
			return nil, fmt.Errorf("postgres exited: %v\n%s", cmd.ProcessState, log())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("postgres did not accept connections within a minute: %v\n%s", err, log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
