// Package jsondoc holds a JSON document in the form Decoy queries it: the
// stored bytes, validated once, the byte span of every element when the
// document is an array, and per-path columns of the values each element holds,
// built on first use and kept with the document, in its registry of
// structures (budget.Set), while the bound of the cache that holds it has
// room for them.
//
// Nothing here re-encodes: every value is a span of the stored bytes, so what
// a query selects is written back byte for byte.
package jsondoc

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/decoy-mock/decoy/budget"
)

// MaxDepth is the deepest nesting of arrays and objects Parse accepts.
const MaxDepth = 512

// MaxSize is the largest document Parse accepts: spans are 32-bit.
const MaxSize = math.MaxUint32 - 1

// SyntaxError describes why a document is not valid JSON, and where.
type SyntaxError struct {
	Offset int64 // byte offset of the error
	Line   int   // 1-based line of Offset
	Column int   // 1-based column (in bytes) of Offset
	Msg    string
	// TooDeep is set when the document is valid as far as read but nests
	// arrays and objects deeper than MaxDepth.
	TooDeep bool
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Kind is the type of a JSON value, or Missing for a path that reaches nothing.
type Kind uint8

// Kinds of values.
const (
	Missing Kind = iota
	Null
	False
	True
	Number
	String
	Object
	Array
)

var kindNames = [...]string{"missing", "null", "false", "true", "number", "string", "object", "array"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one JSON value of a document: its kind and the span of its text
// (strings include their quotes).
type Value struct {
	Start, End uint32
	Kind       Kind
	// Escaped is set for strings that contain backslash escapes and must be
	// decoded before their text is compared.
	Escaped bool
}

type span struct{ start, end uint32 }

// Parse validates raw as JSON (RFC 8259; like encoding/json it does not check
// that strings are valid UTF-8) and returns it as a Document. raw is kept, not
// copied: the caller must not change it afterwards. Errors are *SyntaxError.
func Parse(raw []byte) (*Document, error) {
	if len(raw) > MaxSize {
		return nil, &SyntaxError{Line: 1, Column: 1, Msg: "document larger than 4 GiB"}
	}
	p := parser{b: raw}
	d := &Document{raw: raw, set: budget.Unbounded()}
	p.ws()
	var err error
	if p.peek() == '[' {
		d.isArray = true
		err = p.array(1, d)
	} else {
		err = p.value(0)
	}
	if err == nil {
		p.ws()
		if p.i < len(p.b) {
			err = p.fail("unexpected " + describe(p.b[p.i]) + " after the top-level value")
		}
	}
	if err != nil {
		return nil, err
	}
	d.spans = p.spans.list()
	return d, nil
}

// spanChunks collects the spans of a top-level array in the chunks of the
// document's span list (chunkMax spans each, the last growing as small
// documents need), so that the list is never joined: a join held the
// chunks and their copy at once, twice the spans (16 bytes an element of
// `[0,0,…]`, twice the document), and appending to one slice would copy
// it at each growth. A document of one chunk holds it flat.
type spanChunks struct {
	l   chunkList[span]
	cur []span
}

func (c *spanChunks) add(s span) {
	if len(c.cur) >= chunkMax {
		c.push()
		c.cur = make([]span, 0, chunkMax)
	}
	c.cur = append(c.cur, s)
}

// push ends the current chunk.
func (c *spanChunks) push() {
	if c.l.starts == nil {
		c.l.starts = []int{0}
	}
	c.l.chunks = append(c.l.chunks, c.cur)
	c.l.starts = append(c.l.starts, c.l.starts[len(c.l.starts)-1]+len(c.cur))
}

// list returns the spans collected.
func (c *spanChunks) list() spanList {
	if len(c.l.chunks) == 0 {
		if cap(c.cur)-len(c.cur) > cap(c.cur)/8 {
			c.cur = slices.Clip(append([]span(nil), c.cur...))
		}
		return spanList{flat: c.cur}
	}
	if len(c.cur) > 0 {
		c.push()
	}
	c.l.setUniform(chunkMax)
	return c.l
}

type parser struct {
	b     []byte
	i     int
	spans spanChunks // of the top-level array
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) fail(msg string) error {
	off := p.i
	if off > len(p.b) {
		off = len(p.b)
	}
	line := 1 + bytes.Count(p.b[:off], []byte{'\n'})
	col := off + 1
	if nl := bytes.LastIndexByte(p.b[:off], '\n'); nl >= 0 {
		col = off - nl
	}
	return &SyntaxError{Offset: int64(off), Line: line, Column: col, Msg: msg}
}

func (p *parser) tooDeep() error {
	err := p.fail(fmt.Sprintf("nesting deeper than %d levels", MaxDepth)).(*SyntaxError)
	err.TooDeep = true
	return err
}

// unexpected fails at the current byte, naming it (or the end of input).
func (p *parser) unexpected(expected string) error {
	if p.i >= len(p.b) {
		return p.fail("unexpected end of input, expected " + expected)
	}
	return p.fail("unexpected " + describe(p.b[p.i]) + ", expected " + expected)
}

func describe(c byte) string {
	switch {
	case c == 0xEF:
		return "byte 0xEF (a byte order mark is not allowed)"
	case c >= 0x20 && c < 0x7f:
		return strconv.QuoteRune(rune(c))
	default:
		return fmt.Sprintf("byte 0x%02X", c)
	}
}

func (p *parser) value(depth int) error {
	switch c := p.peek(); {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth+1, nil)
	case c == '"':
		return p.str()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return p.unexpected("a value")
	}
}

func (p *parser) object(depth int) error {
	if depth > MaxDepth {
		return p.tooDeep()
	}
	p.i++ // '{'
	p.ws()
	if p.peek() == '}' {
		p.i++
		return nil
	}
	for {
		if p.peek() != '"' {
			return p.unexpected("a string key")
		}
		if err := p.str(); err != nil {
			return err
		}
		p.ws()
		if p.peek() != ':' {
			return p.unexpected("':' after an object key")
		}
		p.i++
		p.ws()
		if err := p.value(depth); err != nil {
			return err
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			return nil
		default:
			return p.unexpected("',' or '}' in an object")
		}
	}
}

// array parses an array; when d is set (the top-level array) it records the
// span of every element.
func (p *parser) array(depth int, d *Document) error {
	if depth > MaxDepth {
		return p.tooDeep()
	}
	p.i++ // '['
	p.ws()
	if p.peek() == ']' {
		p.i++
		return nil
	}
	for {
		start := p.i
		if err := p.value(depth); err != nil {
			return err
		}
		if d != nil {
			p.spans.add(span{uint32(start), uint32(p.i)})
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			return nil
		default:
			return p.unexpected("',' or ']' in an array")
		}
	}
}

func (p *parser) str() error {
	p.i++ // opening quote
	for {
		for p.i < len(p.b) {
			c := p.b[p.i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			p.i++
		}
		if p.i >= len(p.b) {
			return p.fail("unterminated string")
		}
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return nil
		case c < 0x20:
			return p.fail(fmt.Sprintf("control character 0x%02X in a string (escape it)", c))
		}
		p.i++ // backslash
		switch p.peek() {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			p.i++
			for k := 0; k < 4; k++ {
				if !isHex(p.peek()) {
					return p.fail("invalid \\u escape in a string")
				}
				p.i++
			}
		case 0:
			if p.i >= len(p.b) {
				return p.fail("unterminated string")
			}
			fallthrough
		default:
			return p.fail("invalid escape in a string")
		}
	}
}

func (p *parser) number() error {
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return p.unexpected("a digit")
	}
	if p.peek() == '.' {
		p.i++
		if !isDigit(p.peek()) {
			return p.unexpected("a digit after the decimal point")
		}
		p.digits()
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if !isDigit(p.peek()) {
			return p.unexpected("a digit in the exponent")
		}
		p.digits()
	}
	return nil
}

func (p *parser) digits() {
	for p.i < len(p.b) && isDigit(p.b[p.i]) {
		p.i++
	}
}

func (p *parser) literal(lit string) error {
	for k := 0; k < len(lit); k++ {
		if p.peek() != lit[k] {
			if k == 0 {
				return p.unexpected("a value")
			}
			return p.unexpected("'" + lit + "'")
		}
		p.i++
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
