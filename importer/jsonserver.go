package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

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
//
// Each value is at most opt.MaxDataBytes, and all of them together at
// most opt.MaxUnpackedBytes. SpoolJSONServer reads the same file as it
// arrives.
func JSONServer(data []byte, opt Options) (*Result, error) {
	return readJSONServer(bytes.NewReader(data), opt, func(m *Mock, value []byte) error {
		m.Data = value
		return nil
	})
}

// SpoolJSONServer reads a db.json from r as JSONServer does, but writes
// each value to a file of its own in opt.Spool (empty: the system's
// temporary folder) as it is read: the mocks of the result have no Data,
// but their Spool and Size, and the memory it takes
// is about three times the largest value (the decoder's buffer, which may
// grow to twice it, and the value), whatever the size of the file. The
// caller removes the files with Result.Close; on an error they are
// removed already.
func SpoolJSONServer(r io.Reader, opt Options) (res *Result, err error) {
	var spooled []string
	defer func() {
		if err != nil {
			for _, f := range spooled {
				_ = os.Remove(f)
			}
		}
	}()
	return readJSONServer(r, opt, func(m *Mock, value []byte) error {
		spool, err := spoolFile(opt.Spool, m.Name, int64(len(value)), bytes.NewReader(value))
		if err != nil {
			return err
		}
		spooled = append(spooled, spool)
		m.Spool, m.Size = spool, int64(len(value))
		return nil
	})
}

// readJSONServer reads a db.json from r, one member at a time, and hands
// each mock's value to keep, which keeps it in the mock. The decoder
// holds one member at most: a key or value past MaxDataBytes is refused
// as soon as it is, not once read. What it keeps of the keys is bounded
// too: at most MaxMocks valid names, and as many others, each of those by
// its hash and 100 bytes of it.
func readJSONServer(r io.Reader, opt Options, keep func(m *Mock, value []byte) error) (*Result, error) {
	l := opt.Limits.withDefaults()
	base, err := basePath(opt.BasePath)
	if err != nil {
		return nil, err
	}
	in := &window{r: r}
	dec := json.NewDecoder(in)
	next := in.next(dec, l)
	var key string // the key whose value is read, once read
	fail := func(err error) error {
		switch {
		case in.over && key != "":
			return tooLargeValue(key, l.MaxDataBytes)
		case in.over:
			return decoy.Errorf(decoy.ETOOLARGE, "A key of the db.json, or the space between its members, is larger than %d bytes (--max-data-bytes)", l.MaxDataBytes)
		}
		return invalidJSON(err)
	}
	notObject := decoy.Errorf(decoy.EINVALID, "A json-server db.json must be a JSON object, one key per resource")
	next()
	if err := in.skipBOM(); err != nil {
		return nil, fail(err)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if in.over {
			return nil, fail(err)
		}
		return nil, notObject
	}
	res := &Result{}
	seen := map[string]bool{}        // the keys that are names
	seenOther := map[[32]byte]bool{} // the others, by their hash
	var total int64
	for {
		next()
		if !dec.More() {
			break
		}
		key = ""
		t, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		var ok bool
		if key, ok = t.(string); !ok {
			return nil, notObject
		}
		next()
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fail(err)
		}
		if int64(len(value)) > l.MaxDataBytes {
			return nil, tooLargeValue(key, l.MaxDataBytes)
		}
		valid := len(key) <= decoy.MaxNameLength && name(key) == key
		var dup bool
		if valid {
			dup, seen[key] = seen[key], true
		} else {
			h := sha256.Sum256([]byte(key))
			dup, seenOther[h] = seenOther[h], true
		}
		if dup {
			return nil, decoy.Errorf(decoy.EINVALID, "The key %q appears twice in the db.json", cut(key, 100))
		}
		if !valid {
			if len(res.Skipped) >= l.MaxMocks {
				return nil, decoy.Errorf(decoy.ETOOLARGE, "The file has more than %d keys that are no mock's name", l.MaxMocks)
			}
			res.Skipped = append(res.Skipped, Skipped{strings.Clone(cut(key, 100)), "the key is not a valid name (UTF-8, at most 200 bytes)"})
			continue
		}
		if len(res.Mocks) >= l.MaxMocks {
			return nil, decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d mocks", l.MaxMocks)
		}
		if total += int64(len(value)); total > l.MaxUnpackedBytes {
			return nil, decoy.Errorf(decoy.ETOOLARGE, "The db.json's values come to more than %d bytes", l.MaxUnpackedBytes)
		}
		m := Mock{Name: key, ContentType: "application/json", Status: 200}
		if err := keep(&m, value); err != nil {
			return nil, err
		}
		res.Mocks = append(res.Mocks, m)
		if err := res.jsonServerRoutes(base, key, value, l); err != nil {
			return nil, err
		}
	}
	key = ""
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fail(err)
	}
	next()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if in.over {
			return nil, fail(err)
		}
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: text after the db.json's object")
	}
	return res, nil
}

// window is a reader that reads up to a limit the caller moves on, and
// says it was reached: what bounds the buffer of a json.Decoder, which
// reads a whole value before it hands it on.
type window struct {
	r     io.Reader
	n     int64 // bytes read
	limit int64
	over  bool
}

var errOverWindow = errors.New("past the bound of one member")

// next returns what moves w's limit on before each key and value dec
// reads: MaxDataBytes past what dec has taken, and 64 KiB more for the
// space before it and the byte after a number, which ends it.
func (w *window) next(dec *json.Decoder, l Limits) func() {
	return func() { w.limit = dec.InputOffset() + l.MaxDataBytes + 64<<10 }
}

func (w *window) Read(p []byte) (int, error) {
	if w.n >= w.limit {
		w.over = true
		return 0, errOverWindow
	}
	if int64(len(p)) > w.limit-w.n {
		p = p[:w.limit-w.n]
	}
	n, err := w.r.Read(p)
	w.n += int64(n)
	return n, err
}

// skipBOM drops a UTF-8 byte order mark at the start, as JSONServer
// always did.
func (w *window) skipBOM() error {
	var head [3]byte
	n, err := io.ReadFull(w.r, head[:])
	if n == 3 && head == [3]byte{0xef, 0xbb, 0xbf} {
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	w.r = io.MultiReader(bytes.NewReader(head[:n]), w.r)
	return nil
}

func tooLargeValue(key string, max int64) error {
	return decoy.Errorf(decoy.ETOOLARGE, "The value of %q is larger than %d bytes (--max-data-bytes)", cut(key, 100), max)
}

// MaxJSONServerBytes is the most bytes a db.json read within l can take:
// its values, and as much again for its keys, spaces and punctuation.
func MaxJSONServerBytes(l Limits) int64 {
	l = l.withDefaults()
	return 2*l.MaxUnpackedBytes + 1<<20
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
