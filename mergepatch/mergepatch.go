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
	"encoding/json"
	"errors"
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

// member is one member of an object: its key as written (quoted) and
// decoded, and its value as written.
type member struct {
	rawKey []byte
	key    string
	value  []byte
}

// members splits the object obj (valid JSON) into its members, in order.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var ms []member
	for dec.More() {
		keyStart := skipSpace(obj, int(dec.InputOffset()))
		if keyStart < len(obj) && obj[keyStart] == ',' {
			keyStart = skipSpace(obj, keyStart+1)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		keyEnd := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{rawKey: obj[keyStart:keyEnd], key: key, value: raw})
	}
	return ms, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// merge writes target (an object) patched with patch (an object) to out.
func merge(out *bytes.Buffer, target, patch []byte) error {
	tm, err := members(target)
	if err != nil {
		return err
	}
	pm, err := members(patch)
	if err != nil {
		return err
	}
	// The last of duplicate keys wins in a patch, as in a JSON parser;
	// in the target, a key patched applies to each of its members.
	last := make(map[string]int, len(pm))
	for i, m := range pm {
		last[m.key] = i
	}
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
	// written once, where it first appears.
	lastT := make(map[string]int, len(tm))
	for i, m := range tm {
		lastT[m.key] = i
	}
	seen := make(map[string]bool, len(tm))
	for _, m := range tm {
		i, patched := last[m.key]
		if !patched {
			sep()
			out.Write(m.rawKey)
			out.WriteByte(':')
			out.Write(m.value)
			continue
		}
		if seen[m.key] {
			continue // a duplicate of a patched key: written once, with the patch
		}
		seen[m.key] = true
		pv := pm[i].value
		if isNull(pv) {
			continue // removed
		}
		sep()
		out.Write(m.rawKey)
		out.WriteByte(':')
		tv := tm[lastT[m.key]].value
		if isObject(pv) && isObject(tv) {
			if err := merge(out, bytes.TrimSpace(tv), bytes.TrimSpace(pv)); err != nil {
				return err
			}
			continue
		}
		if err := writeValue(out, pv); err != nil {
			return err
		}
	}
	for i, m := range pm {
		if last[m.key] != i || seen[m.key] || isNull(m.value) {
			continue
		}
		seen[m.key] = true
		sep()
		out.Write(m.rawKey)
		out.WriteByte(':')
		if err := writeValue(out, m.value); err != nil {
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
		return merge(out, []byte("{}"), bytes.TrimSpace(v))
	}
	out.Write(v)
	return nil
}

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

func isObject(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
