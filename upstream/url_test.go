package upstream_test

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/upstream"
)

func TestParseBase(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"https://api.example.com", "https://api.example.com", ""},
		{"http://api.example.com/v1/", "http://api.example.com/v1", ""},
		{"http://127.0.0.1:8081/base", "http://127.0.0.1:8081/base", ""},
		{"http://[::1]:8081", "http://[::1]:8081", ""},
		{"https://api.example.com/a%2Fb", "https://api.example.com/a%2Fb", ""},
		{"", "", "empty"},
		{"ftp://x", "", "scheme"},
		{"file:///etc/passwd", "", "scheme"},
		{"gopher://x", "", "scheme"},
		{"api.example.com", "", "scheme"},
		{"//api.example.com", "", "scheme"},
		{"http:api.example.com", "", "not a URL"},
		{"http://", "", "no host"},
		{"http://:80", "", "no host"},
		{"http://user:pass@api.example.com", "", "credentials"},
		{"http://api.example.com?x=1", "", "query"},
		{"http://api.example.com/?", "", "query"},
		{"http://api.example.com/#top", "", "fragment"},
		{"http://api.example.com:99999", "", "port"},
		{"http://api.example.com:0", "", "port"},
		{"http://api.example.com:http", "", ""},
		{"http://api.example.com /x", "", "spaces"},
		{"http://api.example.com\n", "", "spaces"},
		{"http://" + strings.Repeat("a", 2050), "", "longer"},
	} {
		u, err := upstream.ParseBase(c.in)
		switch {
		case c.want != "":
			if err != nil || u.String() != c.want {
				t.Errorf("ParseBase(%q) = %v, %v; want %s", c.in, u, err, c.want)
			}
		case err == nil:
			t.Errorf("ParseBase(%q) = %v; want an error", c.in, u)
		case decoy.ErrorCode(err) != decoy.EINVALID || !strings.Contains(decoy.ErrorMessage(err), c.err):
			t.Errorf("ParseBase(%q): %v; want EINVALID naming %q", c.in, err, c.err)
		}
	}
}

// FuzzParseBase: any text is a URL ParseBase takes, or an EINVALID error
// naming the upstream; one taken is http or https with a host, no
// credentials, query or fragment, and parses again to itself.
func FuzzParseBase(f *testing.F) {
	for _, s := range []string{"https://api.example.com/v1", "http://[::1]:80", "http://u@h", "http://h?q", "http://h#f",
		"http://%zz", "http://h:65536", "HTTP://H/", "http://h/%2F/", "http://[fe80::1%25eth0]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := upstream.ParseBase(s)
		if err != nil {
			if decoy.ErrorCode(err) != decoy.EINVALID || !strings.HasPrefix(decoy.ErrorMessage(err), "Invalid upstream: ") {
				t.Fatalf("ParseBase(%q): %v", s, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("ParseBase(%q) = %#v", s, u)
		}
		again, err := upstream.ParseBase(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("ParseBase(%q) = %s, which parses again to %v, %v", s, u, again, err)
		}
	})
}

// FuzzDotSegments: a path DotSegments lets through stays under the base
// however an upstream reads it: unescaped, with "\" taken for "/", and
// cleaned.
func FuzzDotSegments(f *testing.F) {
	for _, s := range []string{"/%2e%2e/x", "/..%2f..%2fx", "/a/..%5cx", "/v1.2/a.json", "/a/...", "/%zz", "/a%2e%2eb", "//..//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if upstream.DotSegments(p) {
			return
		}
		u, err := url.PathUnescape(p)
		if err != nil {
			t.Fatalf("DotSegments(%q) let through a path it cannot unescape", p)
		}
		u = strings.ReplaceAll(u, `\`, "/")
		if joined := path.Clean("/api/" + u); joined != "/api" && !strings.HasPrefix(joined, "/api/") {
			t.Fatalf("DotSegments(%q) let through a path that leaves the base: %s", p, joined)
		}
	})
}
