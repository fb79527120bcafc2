package decoy

import (
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The JSON of a journal entry (JournalEntry, in rule.go), written without
// reflection: every request a project answers makes one, and a shared
// journal (Redis) stores each as JSON, so that reflection's cost would be
// a read's. It is byte for byte what encoding/json writes from the
// entry's field tags (with HTML left unescaped), which decode it.

// MarshalJSON implements json.Marshaler.
func (e JournalEntry) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 512)), nil
}

// AppendJSON appends the JSON of e to b.
func (e *JournalEntry) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"at":"`...)
	b = e.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","method":`...)
	b = appendJSONString(b, e.Method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, e.Path)
	b = append(b, `,"query":`...)
	b = appendJSONString(b, e.Query)
	b = append(b, `,"headers":`...)
	if e.Headers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		var names [32]string
		keys := names[:0]
		for k := range e.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, e.Headers[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"body":`...)
	b = appendJSONString(b, e.Body)
	if e.BodyCut {
		b = append(b, `,"body_cut":true`...)
	}
	b = append(b, `,"route_id":`...)
	b = appendJSONString(b, e.RouteID)
	b = append(b, `,"mock_id":`...)
	b = appendJSONString(b, e.MockID)
	b = append(b, `,"rule":`...)
	b = appendJSONString(b, e.Rule)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"duration_ms":`...)
	b = appendJSONFloat(b, e.DurationMS)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, e.Client)
	if e.Forwarded {
		b = append(b, `,"forwarded":true`...)
	}
	return append(b, '}')
}

// appendJSONFloat appends f as encoding/json writes a float64; a NaN or
// an infinity, which JSON has not, as 0.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	if m, ok := thousandths(f); ok {
		return appendThousandths(b, m)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 is written 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// thousandths returns f as a whole number m of thousandths, when f is
// the float64 nearest m/1000, as a duration in milliseconds made from
// microseconds is, and not zero (-0 is written "-0"). Below 1e12 the
// ulp of f is under 1.3e-4, so the decimal m/1000 is the shortest that
// reads back as f: what strconv would write, found without its search.
func thousandths(f float64) (int64, bool) {
	if f == 0 || !(math.Abs(f) < 1e12) {
		return 0, false
	}
	m := math.Round(f * 1000)
	if m/1000 != f {
		return 0, false
	}
	return int64(m), true
}

// appendThousandths appends m/1000 as a decimal, without trailing zeros.
func appendThousandths(b []byte, m int64) []byte {
	if m < 0 {
		b = append(b, '-')
		m = -m
	}
	b = strconv.AppendInt(b, m/1000, 10)
	frac := m % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it when not escaping HTML: quotes, backslashes and control
// characters; invalid UTF-8 as U+FFFD; U+2028 and U+2029. Runs of bytes
// that need none of it, most of a request's text, are skipped eight at a
// time (plain reports whether eight bytes are such).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain reports whether the eight bytes of w are ASCII that a JSON string
// holds as it is: none below 0x20, none of 0x80 and up, no '"' and no '\\'.
func plain(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs } // a zero byte's high bit
	return (w|(w-0x20*ones)|zero(w^'"'*ones)|zero(w^'\\'*ones))&highs == 0
}
