package decoy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error codes. The HTTP server maps each to a status in one table.
const (
	ECONFLICT     = "conflict"      // the thing exists already
	EINTERNAL     = "internal"      // a bug or a failed backend
	EINVALID      = "invalid"       // the request is malformed
	ENOTFOUND     = "not_found"     // the thing does not exist
	ETOOLARGE     = "too_large"     // the request body is over the cap
	EUNAUTHORIZED = "unauthorized"  // credentials missing or wrong
	EUNAVAILABLE  = "unavailable"   // a backend cannot be reached
	ERATELIMIT    = "rate_limited"  // too many requests
	EMETHOD       = "bad_method"    // the method is not served here
	EUNSUPPORTED  = "not_supported" // the media type is not accepted
	// ENOSPACE: what was sent cannot be stored, for the server's disk is
	// full. It passes once space is freed, with nothing to change in the
	// request.
	ENOSPACE = "insufficient_storage"
)

// Error is an error whose message is meant for the client. Errors of any
// other type are internal: logged, never shown.
type Error struct {
	Code    string
	Message string
}

// Error implements error. It is the message alone, since an *Error is
// often wrapped with its cause and printed as such.
func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the *Error in err's chain, EINTERNAL for any
// other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-facing message of err: the message of the
// *Error in its chain, or a generic text for internal errors.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal server error"
}

// ErrorJSON returns the body of every error answer: {"error":msg} and a
// newline.
func ErrorJSON(msg string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error string `json:"error"`
	}{msg}) // a struct of one string always encodes
	return b.Bytes()
}

// NotUTF8 is the error that refuses a JSON body that is not UTF-8 (RFC
// 8259 asks for it, and decoding it would replace each bad byte by
// U+FFFD, so that two passwords differing only there would match),
// saying where its first byte out of place is (BadUTF8At).
func NotUTF8(body []byte) error {
	if at := BadUTF8At(body); at != "" {
		return Errorf(EINVALID, "The body must be UTF-8: %s is not", at)
	}
	return Errorf(EINVALID, "The body must be UTF-8")
}

// BadUTF8At says where the first byte of b out of UTF-8 is, as "byte 0xE9
// at line 3, column 29" (columns counted in bytes, as in the JSON syntax
// errors), or "" when b is UTF-8: in a route of many rules or a document
// of many lines, it is found at a glance.
func BadUTF8At(b []byte) string {
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	if off == len(b) {
		return ""
	}
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := off + 1 - (bytes.LastIndexByte(b[:off], '\n') + 1)
	return fmt.Sprintf("byte 0x%02X at line %d, column %d", b[off], line, col)
}
