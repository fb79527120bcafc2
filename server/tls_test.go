package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/internal/testcert"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/studio"
)

// Served over TLS, on HTTP/2 and on HTTP/1.1 alike, requests know it: mock
// URLs are https, Studio's cookie is Secure, and net/http's own error
// answers are still JSON.
func TestOpenTLS(t *testing.T) {
	pair, err := testcert.New(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := pair.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	h := servertest.NewStudio(t, func(c *server.Config) { c.TLSCert, c.TLSKey = certFile, keyFile })
	base := "https://" + h.Srv.Addr().String()
	h2 := pair.Client()
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: pair.ClientConfig()}}

	admin := client.New(base, servertest.AdminToken)
	admin.HTTP = h2
	m, err := admin.CreateMock(context.Background(), strings.NewReader(`[{"a":1}]`), client.CreateOptions{Name: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if want := base + "/mock/" + m.ID; m.URL != want {
		t.Errorf("mock URL %q, want %q", m.URL, want)
	}
	for _, tc := range []struct {
		name   string
		client *http.Client
		proto  string
	}{
		{"HTTP/2", h2, "HTTP/2.0"},
		{"HTTP/1.1", h1, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.client.Get(m.URL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Proto != tc.proto || string(body) != `[{"a":1}]` {
				t.Errorf("read: %d %s %q", resp.StatusCode, resp.Proto, body)
			}

			sign, _ := json.Marshal(map[string]string{"token": servertest.AdminToken})
			resp, err = tc.client.Post(base+studio.SessionPath, "application/json", strings.NewReader(string(sign)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var cookie *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == studio.CookieName {
					cookie = c
				}
			}
			if resp.StatusCode != 200 || cookie == nil || !cookie.Secure {
				t.Errorf("sign-in over TLS: %d, cookie %+v", resp.StatusCode, cookie)
			}
		})
	}

	t.Run("malformed request", func(t *testing.T) {
		config := pair.ClientConfig()
		config.NextProtos = []string{"http/1.1"}
		c, err := tls.Dial("tcp", h.Srv.Addr().String(), config)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /mock/%zz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), "Malformed request") {
			t.Errorf("got %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
	// A failed handshake is the client's doing: logged at Info, not Warn,
	// so that scanners of a public server raise no warnings.
	t.Run("plain HTTP", func(t *testing.T) {
		resp, err := http.Get("http://" + h.Srv.Addr().String() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "serves HTTPS") {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
		// net/http logs the error after it has answered.
		var line string
		for deadline := time.Now().Add(5 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for l := range strings.Lines(h.Logs.String()) {
				if strings.Contains(l, "TLS handshake error") {
					line = l
				}
			}
		}
		if !strings.Contains(line, "level=INFO") {
			t.Errorf("handshake error logged as %q, want level=INFO", line)
		}
	})
}

// A pair that cannot be read stops Open, before it listens.
func TestOpenTLSBadPair(t *testing.T) {
	dir := t.TempDir()
	srv := server.New(server.Config{Addr: "127.0.0.1:0", TLSCert: filepath.Join(dir, "none.pem"), TLSKey: filepath.Join(dir, "none.key")})
	if err := srv.Open(); err == nil || !strings.Contains(err.Error(), "none.pem") {
		srv.Close()
		t.Fatalf("Open with missing files: %v", err)
	}
	if srv.Addr() != nil {
		t.Error("listening after a failed Open")
	}
}
