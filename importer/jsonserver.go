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
// file, not re-encoded.
func JSONServer(data []byte, l Limits) (*Result, error) {
	l = l.withDefaults()
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
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: text after the db.json's object")
	}
	return res, nil
}

func invalidJSON(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return decoy.Errorf(decoy.EINVALID, "Invalid JSON: the file ends early")
	}
	return decoy.Errorf(decoy.EINVALID, "Invalid JSON: %s", clip(err.Error()))
}
