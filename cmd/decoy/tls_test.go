package main_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testcert"
)

// writePair writes a new self-signed pair with serial to cert.pem and
// key.pem in dir.
func writePair(t *testing.T, dir string, serial int64) (pair *testcert.Pair, certFile, keyFile string) {
	t.Helper()
	pair, err := testcert.New(serial)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := pair.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return pair, certFile, keyFile
}

// decoy serve --tls-cert --tls-key serves HTTPS: the admin API and the read
// endpoint over HTTP/2 (and HTTP/1.1 to a client without it), the CLI with the certificate trusted, plain HTTP
// refused in JSON, and a renewed certificate served without a restart.
func TestServeTLS(t *testing.T) {
	certDir := t.TempDir()
	pair, certFile, keyFile := writePair(t, certDir, 1)
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(p.url, "https://") {
		t.Fatalf("serving on %s", p.url)
	}
	hc := pair.Client()
	admin := p.admin()
	admin.HTTP = hc
	const doc = `[{"id":1,"city":"Paris"},{"id":2,"city":"Lyon"}]`
	m, err := admin.CreateMock(context.Background(), strings.NewReader(doc), client.CreateOptions{Name: "cities"})
	if err != nil {
		t.Fatal(err)
	}
	if want := p.url + "/mock/" + m.ID; m.URL != want {
		t.Errorf("mock URL %q, want %q", m.URL, want)
	}

	resp, err := hc.Get(m.URL + "?filters=city%3DLyon")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" || string(body) != `[{"id":2,"city":"Lyon"}]` {
		t.Errorf("read over HTTPS: %d %s %q", resp.StatusCode, resp.Proto, body)
	}

	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: pair.ClientConfig()}}
	resp, err = h1.Get(m.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Proto != "HTTP/1.1" {
		t.Errorf("read over HTTPS by a client without HTTP/2: %d %s", resp.StatusCode, resp.Proto)
	}

	cli := exec.Command(binary, "mock", "get", m.ID)
	cli.Env = append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "SSL_CERT_FILE="+certFile)
	if out, err := cli.CombinedOutput(); err != nil || !strings.Contains(string(out), m.ID) {
		t.Errorf("decoy mock get over HTTPS: %v %s", err, out)
	}

	plain := "http://" + strings.TrimPrefix(p.url, "https://") + "/mock/" + m.ID
	a := get(t, plain)
	var e struct{ Error string }
	if a.status != 400 || a.header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(a.body), &e) != nil || !strings.Contains(e.Error, "HTTPS") {
		t.Errorf("plain HTTP to the HTTPS port: %d %q %q", a.status, a.header.Get("Content-Type"), a.body)
	}

	// A renewed pair is written over the old one (a minute later, so the
	// files' times differ whatever the file system keeps of them).
	renewed, _, _ := writePair(t, certDir, 2)
	later := time.Now().Add(time.Minute)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(pair.Leaf)
	roots.AddCert(renewed.Leaf)
	addr := strings.TrimPrefix(p.url, "https://")
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		serial := c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
		c.Close()
		if serial == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate is not served 10 s after it was written:\n%s", p.stderr)
		}
		// The files are looked at once a second.
		time.Sleep(200 * time.Millisecond)
	}
	for _, line := range []string{"tls_cert=" + certFile, "TLS certificate reloaded"} {
		if !p.waitLog(line) {
			t.Errorf("%q is not logged:\n%s", line, p.stderr)
		}
	}
}

// --tls-cert and --tls-key go together, from flags or DECOY_* variables,
// and a pair that cannot be read stops decoy serve with a clear error.
func TestServeTLSErrors(t *testing.T) {
	_, certFile, _ := writePair(t, t.TempDir(), 1)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"certificate alone", []string{"--tls-cert", certFile}, nil, "--tls-cert and --tls-key go together"},
		{"key alone, from the environment", nil, []string{"DECOY_TLS_KEY=" + certFile}, "--tls-cert and --tls-key go together"},
		{"missing key", []string{"--tls-cert", certFile, "--tls-key", missing}, nil, "TLS certificate " + certFile + " and key " + missing},
		{"certificate as key", []string{"--tls-cert", certFile, "--tls-key", certFile}, nil, "TLS certificate " + certFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, tc.args...)
			cmd := exec.Command(binary, args...)
			cmd.Env = append(cleanEnv(), tc.env...)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), tc.want) {
				t.Errorf("got %v, output:\n%s\nwant exit 1 and %q", err, out, tc.want)
			}
		})
	}
}
