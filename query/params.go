// Package query parses the query parameters of the public read endpoint
// (filters, order_by, order_direction, offset, limit, auth_token) and runs
// the filter, order, offset and limit they describe over a jsondoc.Document.
// It is pure: no I/O, no clock.
package query

import "strings"

// Params are the query parameters the read endpoint knows, decoded once.
// An empty value is the same as an absent one.
type Params struct {
	AuthToken      string
	Filters        string
	OrderBy        string
	OrderDirection string
	Offset         string
	Limit          string
}

// ParseParams reads the known parameters from a raw query string. Only '&'
// separates parameters (';' is an ordinary character); a parameter's first
// occurrence counts; '+' decodes to a space and an invalid percent escape is
// kept as written. Unknown parameters are ignored.
func ParseParams(rawQuery string) Params {
	var p Params
	var seen uint8
	for rawQuery != "" {
		var piece string
		piece, rawQuery, _ = strings.Cut(rawQuery, "&")
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		var dst *string
		var bit uint8
		switch Unescape(k, true) {
		case "auth_token":
			dst, bit = &p.AuthToken, 1
		case "filters":
			dst, bit = &p.Filters, 2
		case "order_by":
			dst, bit = &p.OrderBy, 4
		case "order_direction":
			dst, bit = &p.OrderDirection, 8
		case "offset":
			dst, bit = &p.Offset, 16
		case "limit":
			dst, bit = &p.Limit, 32
		default:
			continue
		}
		if seen&bit != 0 {
			continue
		}
		seen |= bit
		*dst = Unescape(v, true)
	}
	return p
}

// Unescape decodes percent escapes in s, and '+' as a space when plusSpace is
// set. An invalid escape (not '%' and two hex digits) is kept as written.
func Unescape(s string, plusSpace bool) string {
	n := strings.IndexByte(s, '%')
	if n < 0 && (!plusSpace || strings.IndexByte(s, '+') < 0) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+' && plusSpace:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Redact returns a request's escaped path or raw query string, for logging,
// with the value of every parameter whose name holds "token" in any letter
// case (auth_token, AUTH_TOKEN, auth%5Ftoken, a mistyped auth_token+)
// replaced by REDACTED. It errs on the side of hiding: parameters are taken
// to end at '&', ';' or '/', although the read endpoint splits only on '&',
// so that x=1;auth_token=… and a path segment ;auth_token=… are hidden too.
func Redact(raw string) string {
	if !mayNameToken(raw) {
		return raw
	}
	return redact(raw)
}

// redact is Redact without its shortcut.
func redact(raw string) string {
	var b strings.Builder // used once a value is hidden
	start, done := 0, 0   // of the piece; of what b holds
	for i := 0; i <= len(raw); i++ {
		if i < len(raw) && raw[i] != '&' && raw[i] != ';' && raw[i] != '/' {
			continue
		}
		// A path segment without '=' is a name, not a parameter: the
		// token of /admin/v1/auth/token stays as it is.
		name, _, value := strings.Cut(raw[start:i], "=")
		segment := start > 0 && raw[start-1] == '/'
		if (value || !segment) && namesToken(name) {
			b.WriteString(raw[done:start])
			b.WriteString(name + "=REDACTED")
			done = i
		}
		start = i + 1
	}
	if done == 0 {
		return raw
	}
	b.WriteString(raw[done:])
	return b.String()
}

// mayNameToken reports whether raw can hold a name with "token" in it: no
// name can spell one without a k, in a letter case or escaped (%4B, %6B).
// It answers the common query, whose values are escaped (filters=…%3D…)
// and whose names hold no k, without splitting it: IndexByte is
// vectorized, and its scans cost a fraction of the split.
func mayNameToken(raw string) bool {
	if strings.IndexByte(raw, 'k') >= 0 || strings.IndexByte(raw, 'K') >= 0 {
		return true
	}
	for i := strings.IndexByte(raw, '%'); i >= 0 && i+2 < len(raw); {
		if (raw[i+1] == '4' || raw[i+1] == '6') && (raw[i+2] == 'b' || raw[i+2] == 'B') {
			return true
		}
		j := strings.IndexByte(raw[i+1:], '%')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// namesToken reports whether a parameter name, unescaped, holds "token" in
// any letter case; it allocates only for an escaped name.
func namesToken(name string) bool {
	if strings.ContainsAny(name, "%+") {
		name = Unescape(name, true)
	}
	for i := 0; i+5 <= len(name); i++ {
		if strings.EqualFold(name[i:i+5], "token") {
			return true
		}
	}
	return false
}
