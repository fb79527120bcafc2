package importer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// Route paths (§11.2 of the contract): "/" or segments, each literal or a
// whole parameter "{name}", at most maxSegments. An import reads them from
// files people wrote, so each is checked here before it becomes a route:
// what a route cannot be is skipped (OpenAPI, json-server) or refused (a
// Decoy export, which Decoy wrote).

// maxSegments is the most segments a route's path has.
const maxSegments = 32

// param returns the name of a parameter segment, "{name}".
func param(seg string) (string, bool) {
	if len(seg) < 2 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return "", false
	}
	return seg[1 : len(seg)-1], true
}

// validParamName reports whether name can name a route's parameter:
// letters, digits, '_', '-' and '.', not starting with a digit. Letters are
// ASCII ones: the narrowest reading of the contract.
func validParamName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// literalProblem says why seg cannot be a literal segment of a route's
// path; "" when it can. Braces would read as a parameter, '?' and '#' end
// a request's path, '/' ends a segment (a json-server key may hold one),
// and "." and ".." are not segments a client sends.
func literalProblem(seg string) string {
	switch {
	case seg == "":
		return "the path has an empty segment"
	case strings.ContainsAny(seg, "{}"):
		return fmt.Sprintf("the segment %q mixes literal text and a parameter: a route's parameter is a whole segment", clip(seg))
	case seg == "." || seg == "..":
		return fmt.Sprintf("the segment %q is not one a request's path holds", seg)
	case !utf8.ValidString(seg):
		return "a segment is not valid UTF-8"
	}
	for i := 0; i < len(seg); i++ {
		if c := seg[i]; c <= ' ' || c == 0x7f || c == '/' || c == '?' || c == '#' {
			return fmt.Sprintf("the segment %q holds a character a route's path segment cannot (a space, a control character, /, ? or #)", clip(seg))
		}
	}
	return ""
}

// splitPath reads a route's path: the segments of a path that starts with
// "/" ("/" itself has none), each literal or a whole parameter with a
// valid name, no parameter named twice, at most maxSegments; else why not.
func splitPath(path string) ([]string, string) {
	if !strings.HasPrefix(path, "/") {
		return nil, "the path does not start with /"
	}
	if path == "/" {
		return nil, ""
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) > maxSegments {
		return nil, fmt.Sprintf("the path has more than %d segments", maxSegments)
	}
	if reason := checkSegments(segs); reason != "" {
		return nil, reason
	}
	return segs, ""
}

// checkSegments checks each segment of a path, and that no parameter is
// named twice.
func checkSegments(segs []string) string {
	var names []string
	for _, seg := range segs {
		name, isParam := param(seg)
		if !isParam {
			if reason := literalProblem(seg); reason != "" {
				return reason
			}
			continue
		}
		if !validParamName(name) {
			return fmt.Sprintf("the parameter name %q is not one a route can have (letters, digits, _, - and ., not starting with a digit)", clip(name))
		}
		for _, n := range names {
			if n == name {
				return fmt.Sprintf("the parameter {%s} appears twice", name)
			}
		}
		names = append(names, name)
	}
	return ""
}

// joinPath writes segments as a path.
func joinPath(segs []string) string { return "/" + strings.Join(segs, "/") }

// pathShape is a path with its parameters' names left out, as
// decoy.PathShape writes it: two routes of a project may not share a
// method and a shape.
func pathShape(segs []string) string { return decoy.PathShape(joinPath(segs)) }

// params lists the parameters of a path, in order.
func params(segs []string) []string {
	var names []string
	for _, seg := range segs {
		if name, ok := param(seg); ok {
			names = append(names, name)
		}
	}
	return names
}

// isItemPath reports whether a path's last segment is a parameter: a route
// at it is an item route (§11.4), else a collection route.
func isItemPath(segs []string) bool {
	if len(segs) == 0 {
		return false
	}
	_, ok := param(segs[len(segs)-1])
	return ok
}

// basePath checks Options.BasePath and returns its segments: "" (none), or
// a path of literal segments starting with "/" and not ending with one.
func basePath(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	segs, reason := splitPath(s)
	if reason == "" && len(segs) == 0 {
		reason = "it is /" // "" is the root's base path
	}
	if reason == "" && len(params(segs)) > 0 {
		reason = "it has a parameter"
	}
	if reason != "" {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid base_path: %s", reason)
	}
	return segs, nil
}

// mount puts a path's segments under a base path, within maxSegments.
func mount(base, segs []string) ([]string, string) {
	if len(base)+len(segs) > maxSegments {
		return nil, fmt.Sprintf("the path, under the base path, has more than %d segments", maxSegments)
	}
	return append(append([]string(nil), base...), segs...), ""
}

// mount puts the result's routes under a base path; the routes of an
// export that would have more than maxSegments segments there are refused.
func (r *Result) mount(base []string) error {
	if len(base) == 0 {
		return nil
	}
	for i := range r.Routes {
		rt := &r.Routes[i]
		segs, _ := splitPath(rt.Path) // checked when read
		segs, reason := mount(base, segs)
		if reason != "" {
			return decoy.Errorf(decoy.EINVALID, "The route %s %s cannot be put under the base path: %s", rt.Method, clip(rt.Path), reason)
		}
		rt.Path = joinPath(segs)
	}
	return nil
}

// openAPIPath makes an OpenAPI path template a route's path under base:
// "/users/{userId}" is already one. A trailing "/" is dropped (a request's
// is ignored when routes are matched); a segment that mixes literal text
// and a parameter ("/files/{name}.json") cannot be one.
func openAPIPath(base []string, path string) ([]string, string) {
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	segs, reason := splitPath(path)
	if reason != "" {
		return nil, reason
	}
	return mount(base, segs)
}

// defaultAction is a route's action when none is given (§11.2): GET
// reads; POST on a collection route creates; PUT, PATCH and DELETE on an
// item route replace, update and delete; any other pairing reads.
func defaultAction(method string, segs []string) string {
	item := isItemPath(segs)
	switch {
	case method == "POST" && !item:
		return decoy.ActionCreate
	case method == "PUT" && item:
		return decoy.ActionReplace
	case method == "PATCH" && item:
		return decoy.ActionUpdate
	case method == "DELETE" && item:
		return decoy.ActionDelete
	}
	return decoy.ActionRead
}

// actionProblem says why a route at segs cannot have action; "" when it
// can. create writes a collection route's array; replace, update and
// delete an item route's record.
func actionProblem(action string, segs []string) string {
	item := isItemPath(segs)
	switch action {
	case decoy.ActionRead:
	case decoy.ActionCreate:
		if item {
			return "create is an action of a collection route (one whose last segment is literal)"
		}
	case decoy.ActionReplace, decoy.ActionUpdate, decoy.ActionDelete:
		if !item {
			return action + " is an action of an item route (one whose last segment is a parameter)"
		}
	default:
		return "action must be read, create, replace, update or delete"
	}
	return ""
}

// validFieldPath reports whether p is a field path (§1.3): segments split
// on '.', none empty.
func validFieldPath(p string) bool {
	if p == "" {
		return false
	}
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return false
		}
	}
	return true
}
