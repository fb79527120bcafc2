package testservice

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// enableRedis says how to have the Redis tests run.
const enableRedis = "apt-get install redis-server, or set DECOY_TEST_REDIS_URL"

// RedisURL returns the URL of a Redis the test may use: DECOY_TEST_REDIS_URL,
// or else a private server for this test binary, started on first use.
// Without either, it skips the test. The server is shared: a test keeps to
// a key prefix of its own and never flushes it.
func RedisURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("DECOY_TEST_REDIS_URL"); u != "" {
		return u
	}
	return redis.get(t, "Redis", enableRedis, func() (started, error) {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return started{missing: "no redis-server found on PATH"}, nil
		}
		dir, err := os.MkdirTemp("", "decoy-test-redis-")
		if err != nil {
			return started{}, err
		}
		r := &Redis{bin: bin, dir: dir}
		if err := r.startOnSparePort(); err != nil {
			os.RemoveAll(dir)
			return started{}, err
		}
		atEnd(func() { r.Kill(); os.RemoveAll(dir) })
		return started{url: r.URL(), how: bin}, nil
	})
}

var redis shared

// Redis is a redis-server on a loopback port, without persistence, that a
// test may kill, stop and start again.
type Redis struct {
	bin  string
	dir  string
	wrap []string // a command that runs the server (its arguments first)
	args []string // the server's further arguments
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// StartRedis starts a redis-server of the test's own, killed when the test
// ends, for tests that make Redis fail. Without redis-server it skips the
// test: these tests need the binary even when DECOY_TEST_REDIS_URL is set.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	return StartRedisUnder(t, nil)
}

// StartRedisUnder is StartRedis with the server run by the command wrap
// (wrap's arguments, then the server's: valgrind's, say) and given args
// besides its own.
func StartRedisUnder(t testing.TB, wrap []string, args ...string) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Skip(t, "Redis fault", "no redis-server found on PATH: apt-get install redis-server")
	}
	r := &Redis{bin: bin, dir: t.TempDir(), wrap: wrap, args: args}
	if err := r.startOnSparePort(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Kill)
	return r
}

// StartRedisCluster starts a Redis Cluster of the test's own, of one node
// that serves every slot, killed when the test ends: a cluster's rules
// (a command or transaction of one slot) hold in it as in a larger one.
// Without redis-server it skips the test.
func StartRedisCluster(t testing.TB) *Redis {
	t.Helper()
	r := StartRedisUnder(t, nil, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	if got, err := command(r.Addr(), "CLUSTER ADDSLOTSRANGE 0 16383"); err != nil || got != "+OK\r\n" {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %q %v", got, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		info, err := command(r.Addr(), "CLUSTER INFO")
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster is not ready within 30 s: %q %v", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// command sends an inline command and returns its answer's first line, or
// all of a bulk string's.
func command(addr, line string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(line + "\r\n")); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "$") {
		return first, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(first[1:]))
	if err != nil || n < 0 {
		return first, err
	}
	body := make([]byte, n+2)
	_, err = io.ReadFull(br, body)
	return string(body), err
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// URL is the server's redis:// URL, database 0.
func (r *Redis) URL() string { return "redis://" + r.Addr() + "/0" }

// Kill stops the server at once, as a crash would (a stopped one too). It
// may be called again.
func (r *Redis) Kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// Stop ends the server as an operator would (SIGTERM: it, or a command
// that runs it, ends in order), and waits for it. It may be called again.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	<-r.done
	r.cmd = nil
}

// Signal sends sig to the server: SIGSTOP makes it hang.
func (r *Redis) Signal(sig os.Signal) error {
	if r.cmd == nil {
		return fmt.Errorf("redis-server on %s is not running", r.Addr())
	}
	return r.cmd.Process.Signal(sig)
}

// Restart starts a killed server again on the same port, empty.
func (r *Redis) Restart(t testing.TB) {
	t.Helper()
	r.Kill()
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
}

func (r *Redis) startOnSparePort() error {
	var err error
	for range 3 {
		if r.port, err = sparePort(); err != nil {
			return err
		}
		if err = r.start(); err == nil {
			return nil
		}
	}
	return err
}

// start runs the server on r.port and waits until it answers PING.
func (r *Redis) start() error {
	args := append(slices.Clone(r.wrap), r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	cmd := exec.Command(args[0], append(args[1:], r.args...)...)
	var err error
	if cmd.SysProcAttr, err = procAttr(nil, syscall.SIGKILL); err != nil {
		return err
	}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	r.cmd, r.done = cmd, done
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := ping(r.Addr()); err == nil {
			return nil
		}
		select {
		case <-done:
			r.cmd = nil
			return fmt.Errorf("redis-server on %s exited: %v\n%s", r.Addr(), cmd.ProcessState, log.String())
		default:
		}
		if time.Now().After(deadline) {
			r.Kill()
			return fmt.Errorf("redis-server on %s did not answer within 30 s", r.Addr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping sends PING and expects +PONG, which Redis answers only once it is
// ready to serve.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING: %q", line)
	}
	return nil
}
