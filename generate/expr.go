package generate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// value is what an expression gives.
type value struct {
	kind byte // 's' string, 'i' integer, 'f' number, 'b' boolean, 'n' null
	s    string
	i    int64
	f    float64
}

func str(s string) value     { return value{kind: 's', s: s} }
func integer(i int64) value  { return value{kind: 'i', i: i} }
func number(f float64) value { return value{kind: 'f', f: f} }
func boolean(b bool) value {
	if b {
		return value{kind: 'b', i: 1}
	}
	return value{kind: 'b'}
}

// appendJSON appends v as a JSON value.
func (v value) appendJSON(b []byte) []byte {
	if v.kind == 's' {
		return appendString(b, v.s)
	}
	return v.appendText(b)
}

// appendText appends v as text inside a JSON string.
func (v value) appendText(b []byte) []byte {
	switch v.kind {
	case 's':
		return appendStringContent(b, v.s)
	case 'i':
		return strconv.AppendInt(b, v.i, 10)
	case 'f':
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, v.f, 'f', -1, 64)
	case 'b':
		return strconv.AppendBool(b, v.i != 0)
	}
	return append(b, "null"...)
}

// asFloat returns a numeric argument as a float.
func (v value) asFloat() float64 {
	if v.kind == 'i' {
		return float64(v.i)
	}
	return v.f
}

// expr is a compiled expression: a function and its arguments, all
// literals, checked when compiled.
type expr struct {
	fn   *Function
	args []value
	// lit is set for an expression that is a literal alone.
	lit *value
	// choices, for a call of choice, are its arguments written out,
	// drawn as choice's run draws them.
	choices []written
	// request, for request.<path>, is the path it reads in the request a
	// rule's template answers.
	request []string
}

// written is a value as JSON, and as text inside a JSON string.
type written struct{ json, text []byte }

func (x *expr) eval(g *gen) (value, error) {
	if x.lit != nil {
		return *x.lit, nil
	}
	return x.fn.run(g, x.args), nil
}

// appendText appends the expression's value as text inside a JSON
// string.
func (x *expr) appendText(g *gen, b []byte) ([]byte, error) {
	switch {
	case x.request != nil:
		raw, ok := g.lookup(x.request)
		switch {
		case !ok:
			return b, nil
		case raw[0] == '"':
			return appendStringContent(b, unquote(raw)), nil
		}
		return appendStringContent(b, string(raw)), nil
	case x.lit != nil:
	case x.choices != nil:
		return append(b, x.choices[g.intRange(0, int64(len(x.choices)-1))].text...), nil
	case x.fn.text != nil:
		return x.fn.text(g, b, x.args), nil
	case x.fn.num != nil:
		return x.fn.num(g, b, x.args), nil
	}
	v, err := x.eval(g)
	return v.appendText(b), err
}

// appendJSON appends the expression's value as a JSON value.
func (x *expr) appendJSON(g *gen, b []byte) ([]byte, error) {
	switch {
	case x.request != nil:
		raw, ok := g.lookup(x.request)
		switch {
		case !ok:
			return append(b, "null"...), nil
		case raw[0] == '"':
			return appendString(b, unquote(raw)), nil // invalid UTF-8 made U+FFFD, as any string the template writes
		}
		return append(b, raw...), nil
	case x.lit != nil:
	case x.choices != nil:
		return append(b, x.choices[g.intRange(0, int64(len(x.choices)-1))].json...), nil
	case x.fn.text != nil:
		b = x.fn.text(g, append(b, '"'), x.args)
		return append(b, '"'), nil
	case x.fn.num != nil:
		return x.fn.num(g, b, x.args), nil
	}
	v, err := x.eval(g)
	return v.appendJSON(b), err
}

// parseExpr parses an expression from just after its "{{" to its "}}",
// and returns it with the length it took, "}}" included.
func parseExpr(s string, inRepeat bool) (*expr, int, error) {
	var name string
	var args []value
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			return nil, 0, errors.New(`unclosed "{{"`)
		}
		if strings.HasPrefix(s[i:], "}}") {
			i += 2
			break
		}
		tok, n, err := scanToken(s[i:])
		if err != nil {
			return nil, 0, err
		}
		i += n
		if tok.kind == 'r' { // request.<path>: alone
			if name != "" || len(args) > 0 {
				return nil, 0, errors.New("request." + tok.s + " is read alone, without a function or arguments")
			}
			name = "request"
			args = append(args, tok)
			continue
		}
		if name == "request" {
			return nil, 0, errors.New("request." + args[0].s + " is read alone, without a function or arguments")
		}
		if tok.kind == 0 { // a name
			if name != "" || len(args) > 0 {
				return nil, 0, fmt.Errorf("unexpected %q: arguments are literals (numbers, \"strings\", true, false, null)", tok.s)
			}
			name = tok.s
			continue
		}
		args = append(args, tok)
	}
	if name == "request" {
		return &expr{request: strings.Split(args[0].s, ".")}, i, nil
	}
	if name == "" {
		switch len(args) {
		case 0:
			return nil, 0, errors.New("empty expression")
		case 1:
			return &expr{lit: &args[0]}, i, nil
		}
		return nil, 0, errors.New("an expression is a function name and its arguments, or one literal")
	}
	fn := registry[name]
	if fn == nil {
		return nil, 0, fmt.Errorf("unknown function %q", name)
	}
	if name == "index" && !inRepeat {
		return nil, 0, errors.New(`index is only meaningful inside the $item of a $repeat`)
	}
	args, err := fn.compileArgs(args)
	if err != nil {
		return nil, 0, err
	}
	x := &expr{fn: fn, args: args}
	if name == "choice" {
		for _, a := range args {
			x.choices = append(x.choices, written{a.appendJSON(nil), a.appendText(nil)})
		}
	}
	return x, i, nil
}

// scanToken reads one token of an expression: a name (kind 0) or a literal.
func scanToken(s string) (value, int, error) {
	c := s[0]
	switch {
	case c == '"':
		esc := false
		for j := 1; j < len(s); j++ {
			switch {
			case esc:
				esc = false
			case s[j] == '\\':
				esc = true
			case s[j] == '"':
				var out string
				if err := json.Unmarshal([]byte(s[:j+1]), &out); err != nil {
					return value{}, 0, fmt.Errorf("invalid string %s", s[:j+1])
				}
				return str(out), j + 1, nil
			}
		}
		return value{}, 0, errors.New("unclosed string in expression")
	case c == '-' || (c >= '0' && c <= '9'):
		j := 1
		for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
			j++
		}
		text := s[:j]
		if !json.Valid([]byte(text)) {
			return value{}, 0, fmt.Errorf("invalid number %s", text)
		}
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return integer(n), j, nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return value{}, 0, fmt.Errorf("number out of range: %s", text)
		}
		return number(f), j, nil
	case c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
		j := 1
		for j < len(s) && (s[j] == '_' || (s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') || (s[j] >= '0' && s[j] <= '9')) {
			j++
		}
		switch w := s[:j]; w {
		case "request":
			// request.<path>: segments of letters, digits, '_' and '-'
			// (header names), split by '.'.
			if j == len(s) || s[j] != '.' {
				return value{}, 0, errors.New(`request is read as request.<path>: request.path.id, request.header.x-user`)
			}
			k := j + 1
			for k < len(s) && (s[k] == '_' || s[k] == '-' || s[k] == '.' || (s[k]|0x20 >= 'a' && s[k]|0x20 <= 'z') || (s[k] >= '0' && s[k] <= '9')) {
				k++
			}
			path := s[j+1 : k]
			if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
				return value{}, 0, fmt.Errorf("request.%s: a path has no empty segment", path)
			}
			return value{kind: 'r', s: path}, k, nil
		case "true", "false":
			return boolean(w == "true"), j, nil
		case "null":
			return value{kind: 'n'}, j, nil
		default:
			return value{kind: 0, s: w}, j, nil
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return value{}, 0, fmt.Errorf("unexpected %q in expression", r)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringContent(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendStringContent appends s escaped for the inside of a JSON string:
// quotes, backslashes and control characters; invalid UTF-8 becomes U+FFFD.
func appendStringContent(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
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
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// lookup reads a path in the request a rule's template answers.
func (g *gen) lookup(path []string) ([]byte, bool) {
	if g.req == nil {
		return nil, false
	}
	raw, ok := g.req.Lookup(path)
	return raw, ok && len(raw) > 0
}

// unquote returns the content of a JSON string, decoded.
func unquote(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}
