package upstream

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// ParseBase parses a project's upstream (§14): an absolute http or https
// URL with a host, and a path that requests' paths go under. It holds no
// credentials (they would be shown to every viewer of the project), no
// query and no fragment. What it returns has its path without a trailing
// "/". Errors are EINVALID, naming what is wrong.
func ParseBase(raw string) (*url.URL, error) {
	bad := func(why string) error { return decoy.Errorf(decoy.EINVALID, "Invalid upstream: %s", why) }
	if raw == "" {
		return nil, bad("empty")
	}
	if len(raw) > decoy.MaxUpstreamLength {
		return nil, bad("longer than 2048 characters")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return nil, bad("spaces and control characters are not allowed")
		}
	}
	if !utf8.ValidString(raw) {
		return nil, bad("not UTF-8")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, bad("not a URL")
	}
	for i := 0; i < len(u.Host); i++ {
		if c := u.Host[i]; c >= utf8.RuneSelf || c == '%' {
			// A zone never leads to a public address, and a name is
			// dialed as ASCII (punycode).
			return nil, bad("the host must be ASCII, with no zone (punycode for an international name)")
		}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("the scheme must be http or https")
	case u.Opaque != "":
		return nil, bad("not a URL")
	case u.User != nil:
		return nil, bad("credentials are not allowed in the URL")
	case u.Host == "" || u.Hostname() == "":
		return nil, bad("no host")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, bad("a query is not allowed")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, bad("a fragment is not allowed")
	}
	if p := u.Port(); p != "" {
		if len(p) > 5 || strings.TrimLeft(p, "0123456789") != "" || p == "0" || len(p) == 5 && p > "65535" {
			return nil, bad("invalid port")
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	if u.RawPath != "" && u.EscapedPath() != u.RawPath {
		u.RawPath = ""
	}
	return u, nil
}
