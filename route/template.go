package route

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// MaxSegments is the most segments a path template has (§11.2).
const MaxSegments = 32

// Template is a parsed path template: "/" or segments that are each a
// literal or a whole parameter "{name}".
//
// A literal is decoded text, compared with a request's segment once that
// is percent-decoded: "/café" matches "/caf%C3%A9", and "/100%" matches
// "/100%25". It holds any UTF-8 text but '/', '{', '}', '?' and '#' and
// control characters, and is not "." or "..": a client would send '?' and
// '#' only escaped and normalize dot segments away, so such a template
// would be a mistake that never matches. Comparison is byte for byte:
// case-sensitive, with no Unicode normalization.
//
// A parameter name is letters, digits, '_', '-' and '.', not starting with
// a digit; as a parameter binds by default to the field of its own name
// (§11.2), where '.' separates segments of a field path, a name has no
// empty part between dots either (so it starts with neither '.' nor a
// digit). A name appears once in a template.
type Template struct {
	path   string
	segs   []string // literal text, or the parameter's name when param[i]
	param  []bool
	names  []string // parameter names, in order
	at     []int    // at[k] is the index in segs of parameter k
	isItem bool
}

// Parse parses a path template. Its errors are decoy.EINVALID
// "Invalid path: …", naming what is wrong.
func Parse(path string) (*Template, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, invalidPath("it must start with /")
	}
	if !utf8.ValidString(path) {
		return nil, invalidPath("it is not UTF-8")
	}
	t := &Template{path: path}
	if path == "/" {
		return t, nil
	}
	if strings.HasSuffix(path, "/") {
		return nil, invalidPath("only the root path / ends with /")
	}
	n := strings.Count(path, "/")
	if n > MaxSegments {
		return nil, invalidPath("more than " + strconv.Itoa(MaxSegments) + " segments")
	}
	t.segs = make([]string, 0, n)
	t.param = make([]bool, 0, n)
	for i, s := range strings.Split(path[1:], "/") {
		if s == "" {
			return nil, invalidPath("segment " + strconv.Itoa(i+1) + " is empty")
		}
		if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
			name := s[1 : len(s)-1]
			if err := checkName(name); err != nil {
				return nil, err
			}
			if slices.Contains(t.names, name) {
				return nil, invalidPath("parameter {" + name + "} appears twice")
			}
			t.names = append(t.names, name)
			t.at = append(t.at, i)
			t.segs = append(t.segs, name)
			t.param = append(t.param, true)
			continue
		}
		if err := checkLiteral(s); err != nil {
			return nil, err
		}
		t.segs = append(t.segs, s)
		t.param = append(t.param, false)
	}
	t.isItem = t.param[len(t.param)-1]
	return t, nil
}

func invalidPath(why string) error {
	return decoy.Errorf(decoy.EINVALID, "Invalid path: %s", why)
}

// checkLiteral checks a segment that is not a whole parameter.
func checkLiteral(s string) error {
	if s == "." || s == ".." {
		return invalidPath("segment " + s + " is not allowed (clients remove dot segments)")
	}
	for _, r := range s {
		switch {
		case r == '{' || r == '}':
			return invalidPath("segment " + strconv.Quote(s) + ": a parameter {name} is a whole segment")
		case r == '?' || r == '#':
			return invalidPath("segment " + strconv.Quote(s) + ": " + string(r) + " is not part of a path")
		case unicode.IsControl(r):
			return invalidPath("segment " + strconv.Quote(s) + " has a control character")
		}
	}
	return nil
}

// checkName checks a parameter's name.
func checkName(name string) error {
	switch {
	case name == "":
		return invalidPath("a parameter {} has no name")
	case name[0] >= '0' && name[0] <= '9':
		return invalidPath("parameter name " + strconv.Quote(name) + " starts with a digit")
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return invalidPath("parameter name " + strconv.Quote(name) + " has a character other than letters, digits, _, - and .")
		}
	}
	if !validFieldPath(name) {
		return invalidPath("parameter name " + strconv.Quote(name) + " has an empty part between dots")
	}
	return nil
}

// validFieldPath reports whether p is a field path in the syntax of §1.3:
// segments split on '.', none empty.
func validFieldPath(p string) bool {
	return p != "" && p[0] != '.' && p[len(p)-1] != '.' && !strings.Contains(p, "..")
}

// fieldPathProblem says what makes p no field path, "" when it is one.
func fieldPathProblem(p string) string {
	switch {
	case p == "":
		return "the field path is empty"
	case !validFieldPath(p):
		return "field path " + strconv.Quote(p) + " has an empty segment"
	}
	return ""
}

// String returns the template as written.
func (t *Template) String() string { return t.path }

// Params returns the names of the template's parameters, in order.
func (t *Template) Params() []string { return slices.Clone(t.names) }

// Item reports whether the template is an item route's (§11.4): its last
// segment is a parameter. Otherwise it is a collection route's, the root
// "/" among them.
func (t *Template) Item() bool { return t.isItem }

// DefaultAction is the action of a route of this template and method that
// names none (§11.2): GET reads; POST on a collection route creates; PUT,
// PATCH and DELETE on an item route replace, update and delete; any other
// pairing reads.
func (t *Template) DefaultAction(method string) string {
	switch {
	case method == "POST" && !t.isItem:
		return decoy.ActionCreate
	case method == "PUT" && t.isItem:
		return decoy.ActionReplace
	case method == "PATCH" && t.isItem:
		return decoy.ActionUpdate
	case method == "DELETE" && t.isItem:
		return decoy.ActionDelete
	}
	return decoy.ActionRead
}

// CheckAction checks that action is one of the Action constants of package
// decoy and fits the template (§11.2): create only on a collection route,
// replace, update and delete only on an item route; read on either. Its
// errors are decoy.EINVALID "Invalid action: …".
func (t *Template) CheckAction(action string) error {
	switch action {
	case decoy.ActionRead:
		return nil
	case decoy.ActionCreate:
		if t.isItem {
			return decoy.Errorf(decoy.EINVALID, "Invalid action: create needs a collection route (a path whose last segment is literal)")
		}
		return nil
	case decoy.ActionReplace, decoy.ActionUpdate, decoy.ActionDelete:
		if !t.isItem {
			return decoy.Errorf(decoy.EINVALID, "Invalid action: %s needs an item route (a path whose last segment is a parameter)", action)
		}
		return nil
	}
	return decoy.Errorf(decoy.EINVALID, "Invalid action: %s", strconv.Quote(action))
}

// Expand fills the template's parameters with values, in the order of
// Params, and returns the path escaped for a URL (a Location header): a
// request at that path matches the template with these values, as long as
// no route of higher precedence matches it too. Each value should be
// non-empty: an empty one makes an empty segment, which matches nothing.
// Expand panics when the number of values is not the number of parameters.
func (t *Template) Expand(values []string) string {
	if len(values) != len(t.names) {
		panic("route: Expand of " + t.path + " with " + strconv.Itoa(len(values)) + " values")
	}
	if len(t.segs) == 0 {
		return "/"
	}
	var b strings.Builder
	k := 0
	for i, s := range t.segs {
		if t.param[i] {
			s = values[k]
			k++
		}
		b.WriteByte('/')
		b.WriteString(escapeSegment(s))
	}
	return b.String()
}

// escapeSegment escapes decoded text for one path segment, so that a
// client sends it as is and it decodes back to s: '/' and '%' are escaped
// (as url.PathEscape does), and so are the dots of "." and "..", which a
// client would otherwise resolve away.
func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// Validate checks a route's method, path, bind, items and action (§11.2)
// and returns its parsed path. An empty Action is valid (the admin API
// fills in the template's DefaultAction). Its errors are decoy.EINVALID,
// naming the field: "Invalid method: …", "Invalid path: …", "Invalid bind:
// …", "Invalid items: …", "Invalid action: …".
func Validate(r *decoy.Route) (*Template, error) {
	if methodBit(r.Method) == 0 {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid method: %s (one of %s)", strconv.Quote(r.Method), strings.Join(decoy.RouteMethods, ", "))
	}
	t, err := Parse(r.Path)
	if err != nil {
		return nil, err
	}
	if err := t.checkBind(r.Bind); err != nil {
		return nil, err
	}
	if r.Items != nil {
		if why := fieldPathProblem(*r.Items); why != "" {
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid items: %s", why)
		}
	}
	if r.Action != "" {
		if err := t.CheckAction(r.Action); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkBind checks that bind's keys are the template's parameters and its
// values field paths (§1.3). Keys are checked in sorted order, so that the
// error is the same each time.
func (t *Template) checkBind(bind map[string]string) error {
	keys := make([]string, 0, len(bind))
	for k := range bind {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(t.names, k) {
			return decoy.Errorf(decoy.EINVALID, "Invalid bind: {%s} is not a parameter of %s", k, t.path)
		}
		if why := fieldPathProblem(bind[k]); why != "" {
			return decoy.Errorf(decoy.EINVALID, "Invalid bind: {%s}: %s", k, why)
		}
	}
	return nil
}
