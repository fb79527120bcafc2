package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/decoy-mock/decoy"
)

// JSONServer makes one mock per top-level key of a json-server db.json,
// named by the key, with its value as data: the bytes as written in the
// file, not re-encoded. Its routes are json-server's, under opt.BasePath
// (§11.5 of the contract): a key K whose value is an array gives GET and
// POST /K, and GET, PUT, PATCH and DELETE /K/{id} (bound to the records'
// id); any other value gives GET /K. A key that cannot be a path segment
// (a "/", a space, braces) still makes its mock, without routes, and is
// listed as skipped.
func JSONServer(data []byte, opt Options) (*Result, error) {
	l := opt.Limits.withDefaults()
	base, err := basePath(opt.BasePath)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > l.MaxDataBytes {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The file is larger than %d bytes (--max-data-bytes)", l.MaxDataBytes)
	}
	notObject := decoy.Errorf(decoy.EINVALID, "A json-server db.json must be a JSON object, one key per resource")
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, notObject
	}
	res := &Result{}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		key, ok := t.(string)
		if !ok {
			return nil, notObject
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, invalidJSON(err)
		}
		if seen[key] {
			return nil, decoy.Errorf(decoy.EINVALID, "The key %q appears twice in the db.json", cut(key, 100))
		}
		seen[key] = true
		if len(key) > decoy.MaxNameLength || name(key) != key {
			res.Skipped = append(res.Skipped, Skipped{cut(key, 100), "the key is not a valid name (UTF-8, at most 200 bytes)"})
			continue
		}
		if len(res.Mocks) >= l.MaxMocks {
			return nil, decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d mocks", l.MaxMocks)
		}
		res.Mocks = append(res.Mocks, Mock{Name: key, ContentType: "application/json", Status: 200, Data: value})
		if err := res.jsonServerRoutes(base, key, value, l); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: text after the db.json's object")
	}
	return res, nil
}

// jsonServerRoutes adds the routes of the last mock, made of key.
func (r *Result) jsonServerRoutes(base []string, key string, value json.RawMessage, l Limits) error {
	reason := literalProblem(key)
	var segs []string
	if reason == "" {
		segs, reason = mount(base, []string{key, "{id}"})
	}
	if reason != "" {
		r.Skipped = append(r.Skipped, Skipped{cut(key, 100), "no routes: the key is no path segment (" + reason + ")"})
		return nil
	}
	collection, item := joinPath(segs[:len(segs)-1]), joinPath(segs)
	mock := len(r.Mocks) - 1
	routes := []Route{{Method: "GET", Path: collection, Action: decoy.ActionRead}}
	if bytes.HasPrefix(value, []byte("[")) {
		routes = append(routes,
			Route{Method: "POST", Path: collection, Action: decoy.ActionCreate},
			Route{Method: "GET", Path: item, Action: decoy.ActionRead},
			Route{Method: "PUT", Path: item, Action: decoy.ActionReplace},
			Route{Method: "PATCH", Path: item, Action: decoy.ActionUpdate},
			Route{Method: "DELETE", Path: item, Action: decoy.ActionDelete})
	}
	for _, rt := range routes {
		if len(r.Routes) >= l.MaxRoutes {
			return decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d routes", l.MaxRoutes)
		}
		rt.Mock, rt.Bind = mock, map[string]string{}
		if rt.Path == item {
			rt.Bind["id"] = "id"
		}
		r.Routes = append(r.Routes, rt)
	}
	return nil
}

func invalidJSON(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return decoy.Errorf(decoy.EINVALID, "Invalid JSON: the file ends early")
	}
	return decoy.Errorf(decoy.EINVALID, "Invalid JSON: %s", clip(err.Error()))
}
