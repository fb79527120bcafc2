package rule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/query"
)

// Bounds of a rule's headers.
const (
	// MaxHeaders is the most headers a rule sets.
	MaxHeaders = 32
	// maxHeaderName and maxHeaderValue bound a header's name and value.
	maxHeaderName  = 256
	maxHeaderValue = 8 << 10
)

// Statuses a rule answers with: those a mock answers with (§3).
const (
	minStatus = 200
	maxStatus = 599
)

// notSettable are the headers a rule may not set (lower case): the
// hop-by-hop headers, which describe a connection rather than an answer
// (RFC 9110 §7.6.1), and Content-Length, which the server works out
// (a fault of "malformed" announces a wrong one on purpose).
var notSettable = []string{"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}

// Check checks a route's rules as the admin API takes them (§13.1 of the
// contract): at most decoy.MaxRules of them, of at most
// decoy.MaxRulesBytes as stored; and tidies them: a body or template of
// null is none. params
// are the parameters of the route's path, which conditions and templates
// may read as path.<param>; templates are compiled within lim, as
// PUT …/template compiles one. The first problem found is an EINVALID
// error that names the rule by its place (from 1) and name:
// "Invalid rule 2 (slow): when: Unsupported operator: $gt".
//
// A fault of "reset" or "empty" answers nothing, so a rule with one may
// not set a status, headers, a body or a template (they would be
// ignored); "malformed" sends a head (the status and headers) and part of
// the body, so it takes them all.
func Check(rules []decoy.Rule, params []string, lim generate.Limits) (err error) {
	if len(rules) > decoy.MaxRules {
		return decoy.Errorf(decoy.EINVALID, "Invalid rules: a route has at most %d rules", decoy.MaxRules)
	}
	defer func() {
		if err == nil {
			if b, _ := decoy.EncodeRules(rules); len(b) > decoy.MaxRulesBytes {
				err = decoy.Errorf(decoy.EINVALID, "Invalid rules: a route's rules are at most %d KiB of JSON (%d KiB here)", decoy.MaxRulesBytes>>10, (len(b)+1023)>>10)
			}
		}
	}()
	for i := range rules {
		r := &rules[i]
		if isNull(r.Body) {
			r.Body = nil
		}
		if isNull(r.Template) {
			r.Template = nil
		}
		if err := check(r, params, lim); err != nil {
			return InvalidRule(i, r, err)
		}
	}
	return nil
}

// InvalidRule is the EINVALID error of err, a problem found in rule i
// (from 0), naming it by its place (from 1) and its name.
func InvalidRule(i int, r *decoy.Rule, err error) error {
	name := ""
	if r.Name != "" && utf8.ValidString(r.Name) && len(r.Name) <= decoy.MaxNameLength && !strings.ContainsFunc(r.Name, isControl) {
		name = " (" + r.Name + ")"
	}
	if de, ok := err.(*decoy.Error); ok {
		if de.Code != decoy.EINVALID {
			return err // compiling a template was stopped: the server's doing
		}
		err = errors.New(de.Message)
	}
	return decoy.Errorf(decoy.EINVALID, "Invalid rule %d%s: %s", i+1, name, err.Error())
}

// CheckSent checks, besides Check, what is refused in rules a caller sends
// now but was stored before, and stays good in a route, an export or a
// seed folder that holds it: a condition on a standard method written in
// another letter case (method=post), which methods, compared as clients
// send them, never match.
func CheckSent(rules []decoy.Rule) error {
	for i := range rules {
		r := &rules[i]
		when, err := query.ParseConditions(r.When)
		if err != nil {
			continue // Check's to say
		}
		for _, c := range when {
			if len(c.Path) == 1 && c.Path[0] == "method" && (c.Op == query.OpEq || c.Op == query.OpNe) &&
				c.Value != strings.ToUpper(c.Value) && standardMethod(strings.ToUpper(c.Value)) {
				return InvalidRule(i, r, fmt.Errorf("when: method %s: methods are compared as clients send them, in upper case (%s), or with $eqi", c.Value, strings.ToUpper(c.Value)))
			}
		}
	}
	return nil
}

// isNull reports whether raw is JSON null (or nothing).
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// check checks one rule; its error's message is what is wrong.
func check(r *decoy.Rule, params []string, lim generate.Limits) error {
	if !utf8.ValidString(r.Name) || len(r.Name) > decoy.MaxNameLength || strings.ContainsFunc(r.Name, isControl) {
		return fmt.Errorf("name must be text of at most %d bytes", decoy.MaxNameLength)
	}
	when, err := query.ParseConditions(r.When)
	if err != nil {
		return fmt.Errorf("when: %s", decoy.ErrorMessage(err))
	}
	for _, p := range when.Paths() {
		if reason := checkTarget(p, params); reason != "" {
			return fmt.Errorf("when: %s: %s", strings.Join(p, "."), reason)
		}
	}
	if r.Status != nil && (*r.Status < minStatus || *r.Status > maxStatus) {
		return fmt.Errorf("status must be an HTTP status from %d to %d", minStatus, maxStatus)
	}
	if r.DelayMS < 0 || r.DelayMS > decoy.MaxDelayMS {
		return fmt.Errorf("delay_ms must be from 0 to %d", decoy.MaxDelayMS)
	}
	if r.Times != nil && *r.Times < 1 {
		return fmt.Errorf("times must be 1 or more (leave it out for every time)")
	}
	if err := checkHeaders(r.Headers); err != nil {
		return err
	}
	switch r.Fault {
	case "", decoy.FaultMalformed:
	case decoy.FaultReset, decoy.FaultEmpty:
		if r.Status != nil || len(r.Headers) > 0 || r.Body != nil || r.Template != nil {
			return fmt.Errorf("a fault of %s answers nothing: it takes no status, headers, body or template", r.Fault)
		}
	default:
		return fmt.Errorf("fault must be reset, empty or malformed")
	}
	if r.Body != nil && r.Template != nil {
		return fmt.Errorf("body and template: give one or the other")
	}
	if r.Body != nil && !json.Valid(r.Body) {
		return fmt.Errorf("body must be JSON")
	}
	if r.Template != nil {
		t, err := generate.ParseRequestTemplate(r.Template, lim)
		if err != nil {
			if decoy.ErrorCode(err) != decoy.EINVALID {
				return err
			}
			return fmt.Errorf("template: %s", decoy.ErrorMessage(err))
		}
		for _, p := range t.RequestReads() {
			if reason := checkTarget(p, params); reason != "" {
				return fmt.Errorf("template: request.%s: %s", strings.Join(p, "."), reason)
			}
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// standardMethod reports whether m is one of the methods of RFC 9110 or
// PATCH.
func standardMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH":
		return true
	}
	return false
}

// checkTarget says what is wrong with a path a condition or a template
// reads in the request, or "" when it reads a part of it.
func checkTarget(p []string, params []string) string {
	switch p[0] {
	case "method":
		if len(p) > 1 {
			return "the method is text, with no fields"
		}
	case "path":
		switch {
		case len(p) == 1:
			return "name a parameter of the route's path (path.<param>)"
		case !slices.Contains(params, p[1]):
			return "the route's path has no parameter {" + p[1] + "}"
		case len(p) > 2:
			return "a parameter's value is text, with no fields"
		}
	case "query":
		switch {
		case len(p) == 1:
			return "name a query parameter (query.<name>)"
		case len(p) > 2:
			return "a query parameter's value is text, with no fields"
		}
	case "header":
		switch {
		case len(p) == 1:
			return "name a header (header.<name>, in lower case)"
		case len(p) > 2:
			return "a header's value is text, with no fields"
		case strings.ToLower(p[1]) != p[1]:
			return "header names are written in lower case (header." + strings.ToLower(p[1]) + ")"
		}
	case "body":
	default:
		return "a rule reads the request's method, path.<param>, query.<name>, header.<name> or body.<path>"
	}
	return ""
}

// checkHeaders checks the headers a rule sets.
func checkHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return fmt.Errorf("headers: at most %d", MaxHeaders)
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names) // the first problem is the same every time
	for _, name := range names {
		if !validName(name) {
			return fmt.Errorf("headers: %q is not a header name", clip(name))
		}
		if slices.Contains(notSettable, strings.ToLower(name)) {
			return fmt.Errorf("headers: %s is the server's to set", name)
		}
		if v := h[name]; len(v) > maxHeaderValue || strings.ContainsFunc(v, func(r rune) bool { return isControl(r) && r != '\t' }) {
			return fmt.Errorf("headers: the value of %s must be text of at most %d bytes, without line breaks", name, maxHeaderValue)
		}
	}
	return nil
}

// validName reports whether s is a header name (an RFC 9110 token).
func validName(s string) bool {
	if s == "" || len(s) > maxHeaderName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
