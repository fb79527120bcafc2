package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// A body that stops coming is cut once it falls behind the floor rate:
// whatever the handler made of its failed read (a sign-in's, an
// upload's), the answer is a 408 in JSON that says why, the connection is
// closed, and the cut is counted and logged.
func TestSlowBodyIsAnswered408(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) {
		c.MinBodyRate = 1 << 10
		c.BodyGrace = 200 * time.Millisecond
	})
	want := regexp.MustCompile(`^\{"error":"Request body too slow: 1 bytes in [0-9.]+m?s, under the minimum of 1024 bytes a second after the first 200ms \(--min-body-rate\)"\}\n$`)
	for i, path := range []string{"/admin/v1/auth/token", "/admin/v1/mocks"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "+servertest.AdminToken+
			"\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n[")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !want.Match(b) || resp.Header.Get("Content-Type") != "application/json" || !resp.Close {
			t.Errorf("%s: %d %s (Connection: close %v), want 408 %s", path, resp.StatusCode, b, resp.Close, want)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("%s: the connection was kept", path)
		}
		if got, want := h.Metric(`decoy_refusals_total{reason="slow_body"}`), []string{"1", "2"}[i]; got != want {
			t.Errorf("%s: slow_body refusals %s, want %s", path, got, want)
		}
	}
	if !strings.Contains(h.Logs.String(), "request body too slow") {
		t.Errorf("the cuts were not logged:\n%s", h.Logs)
	}
}
