// Package mergepatch applies JSON Merge Patches (RFC 7396) to JSON
// objects as written, byte for byte where the patch leaves them alone: a
// record's members keep their order and their text (key spelling, number
// spelling, escapes, nested values); a patched member takes the patch's
// value in its place; new members go last, in the patch's order; members
// patched to null are removed. Objects in both merge recursively, as the
// RFC says; any other patch value replaces the target's.
//
// It is pure and bounded by its inputs: the target and the patch are
// validated JSON (the caller's parser), at most as deep as they are.
package mergepatch

import (
	"bytes"
	"errors"

	"github.com/decoy-mock/decoy/jsondoc"
)

// ErrNotObject is Apply's error for a target or a patch that is not a
// JSON object.
var ErrNotObject = errors.New("mergepatch: not a JSON object")

// Apply returns target patched with patch. Both must be valid JSON (the
// caller validates what it was sent); patch and target must be objects.
// The result is compact where the patch changed it, and keeps the
// target's text elsewhere.
func Apply(target, patch []byte) ([]byte, error) {
	t, p := bytes.TrimSpace(target), bytes.TrimSpace(patch)
	if len(t) == 0 || t[0] != '{' || len(p) == 0 || p[0] != '{' {
		return nil, ErrNotObject
	}
	var out bytes.Buffer
	out.Grow(len(t) + len(p))
	if err := merge(&out, t, p); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// errInvalid is merge's error for text that is not valid JSON.
var errInvalid = errors.New("mergepatch: invalid JSON")

// keyIndex finds the last member of a list with a key: by a scan of a
// short list, through a map of a long one.
type keyIndex struct {
	ms []jsondoc.Member
	m  map[string]int
}

// shortList is the most members a keyIndex scans.
const shortList = 16

func newKeyIndex(ms []jsondoc.Member) keyIndex {
	x := keyIndex{ms: ms}
	if len(ms) > shortList {
		x.m = make(map[string]int, len(ms))
		for i, m := range ms {
			x.m[string(m.Key)] = i
		}
	}
	return x
}

// last returns the index of the last member whose key is key.
func (x keyIndex) last(key []byte) (int, bool) {
	if x.m != nil {
		i, ok := x.m[string(key)]
		return i, ok
	}
	for i := len(x.ms) - 1; i >= 0; i-- {
		if bytes.Equal(x.ms[i].Key, key) {
			return i, true
		}
	}
	return 0, false
}

// merge writes target (an object) patched with patch (an object) to out.
func merge(out *bytes.Buffer, target, patch []byte) error {
	var keys []byte
	var tbuf, pbuf [shortList]jsondoc.Member
	tm, ok := jsondoc.AppendMembers(tbuf[:0], &keys, target)
	if !ok {
		return errInvalid
	}
	pm, ok := jsondoc.AppendMembers(pbuf[:0], &keys, patch)
	if !ok {
		return errInvalid
	}
	// The last of duplicate keys wins in a patch, as in a JSON parser;
	// in the target, a key patched applies to each of its members.
	last := newKeyIndex(pm)
	out.WriteByte('{')
	n := 0
	sep := func() {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
	}
	// A key the target holds twice has the value of its last occurrence,
	// as in a JSON parser: a patched key is merged with that one, and
	// written once, where it first appears. seen marks the patch's
	// members written (each the last of its key).
	lastT := newKeyIndex(tm)
	seen := make([]bool, len(pm))
	for _, m := range tm {
		i, patched := last.last(m.Key)
		if !patched {
			sep()
			out.Write(m.RawKey)
			out.WriteByte(':')
			out.Write(m.Value)
			continue
		}
		if seen[i] {
			continue // a duplicate of a patched key: written once, with the patch
		}
		seen[i] = true
		pv := pm[i].Value
		if isNull(pv) {
			continue // removed
		}
		sep()
		out.Write(m.RawKey)
		out.WriteByte(':')
		j, _ := lastT.last(m.Key)
		tv := tm[j].Value
		if isObject(pv) && isObject(tv) {
			if err := merge(out, tv, pv); err != nil {
				return err
			}
			continue
		}
		if err := writeValue(out, pv); err != nil {
			return err
		}
	}
	for i, m := range pm {
		if j, _ := last.last(m.Key); j != i || seen[i] || isNull(m.Value) {
			continue
		}
		seen[i] = true
		sep()
		out.Write(m.RawKey)
		out.WriteByte(':')
		if err := writeValue(out, m.Value); err != nil {
			return err
		}
	}
	out.WriteByte('}')
	return nil
}

// writeValue writes a patch value that is new to the target: as the RFC
// says, an object in it is itself merged into nothing, which drops its
// null members.
func writeValue(out *bytes.Buffer, v []byte) error {
	if isObject(v) {
		return merge(out, []byte("{}"), v)
	}
	out.Write(v)
	return nil
}

func isNull(v []byte) bool { return string(v) == "null" }

func isObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }
