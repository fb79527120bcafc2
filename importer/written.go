package importer

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	yaml "github.com/oasdiff/yaml3"
)

// This file keeps an example as its description writes it: its keys in
// their order and its numbers as spelled. kin-openapi gives an example as
// a Go value, whose maps have no order. In a JSON description the example's
// bytes are found by its JSON pointer; in a YAML one, by the place
// kin-openapi gives, in the description read again as a tree of nodes by
// kin-openapi's own YAML parser.

// place is where an example is written: its JSON pointer from the
// description's root, as segments, and the line and column of its key that
// kin-openapi gives for YAML.
type place struct {
	ptr []string
	at  openapi3.Location
}

// written is a description as kin-openapi read it: for JSON, the objects
// on the way to its examples, each parsed once; for YAML, the value nodes
// of its mappings by the place of their key, read on first use.
type written struct {
	data    []byte
	json    bool
	objects map[string]map[string]json.RawMessage // JSON: by pointer

	read   bool
	values map[[2]int]*yaml.Node // YAML: by the line and column of their key
}

// example returns, as JSON, the example written at p, if it means exactly
// what value (the example as kin-openapi read it) means; else nil, and the
// caller encodes value itself. At most about limit bytes are written:
// YAML aliases cannot make more.
func (w *written) example(p place, value any, limit int64) []byte {
	var out []byte
	if w.json {
		raw, ok := w.jsonAt(p.ptr, 0)
		var b bytes.Buffer
		if !ok || int64(len(raw)) > limit || json.Compact(&b, raw) != nil {
			return nil
		}
		out = b.Bytes()
	} else {
		n := w.yamlAt(p.at)
		if n == nil {
			return nil
		}
		o := nodeJSON{limit: limit}
		if !o.write(n, 0) {
			return nil
		}
		out = o.b.Bytes()
	}
	// Only the order and spelling may differ from what kin-openapi read.
	want, err := json.Marshal(value)
	if err != nil || !sameJSON(out, want) {
		return nil
	}
	return out
}

// jsonAt returns the bytes at a JSON pointer of a JSON description. An
// object on the way that is a $ref stands for what it points at, as
// kin-openapi resolves it; the value found is data, and is not followed.
func (w *written) jsonAt(ptr []string, hops int) (json.RawMessage, bool) {
	v, at := json.RawMessage(w.data), ""
	for _, seg := range ptr {
		obj, ok := w.object(at, v)
		if !ok {
			return nil, false
		}
		if ref, isRef := obj["$ref"]; isRef {
			var s string
			if hops >= maxRefChain || json.Unmarshal(ref, &s) != nil {
				return nil, false
			}
			target, ok := pointerOf(s)
			if !ok {
				return nil, false
			}
			if v, ok = w.jsonAt(target, hops+1); !ok {
				return nil, false
			}
			at = pointerString(target)
			if obj, ok = w.object(at, v); !ok {
				return nil, false
			}
		}
		if v, ok = obj[seg]; !ok {
			return nil, false
		}
		at += pointerString([]string{seg})
	}
	return v, true
}

// pointerString writes a JSON pointer's segments out.
func pointerString(segs []string) string {
	var b strings.Builder
	for _, seg := range segs {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// object returns the members of the JSON object v found at pointer at,
// read once: each member's bytes are a part of the description's, never
// a copy, so that objects read on the way cost no more memory than their
// member names.
func (w *written) object(at string, v json.RawMessage) (map[string]json.RawMessage, bool) {
	if obj, ok := w.objects[at]; ok {
		return obj, obj != nil
	}
	obj := members(v)
	if w.objects == nil {
		w.objects = map[string]map[string]json.RawMessage{}
	}
	w.objects[at] = obj
	return obj, obj != nil
}

// members reads a JSON object's members, the last of a name written twice
// winning as encoding/json has it; nil for anything else.
func members(v json.RawMessage) map[string]json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	obj := map[string]json.RawMessage{}
	for dec.More() {
		k, err := dec.Token()
		name, ok := k.(string)
		if err != nil || !ok {
			return nil
		}
		start := dec.InputOffset() // the end of the name: ':' and spaces follow
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
		obj[name] = bytes.TrimLeft(v[start:dec.InputOffset()], " \t\r\n:")
	}
	return obj
}

// yamlAt returns the node written after the key at loc in a YAML
// description.
func (w *written) yamlAt(loc openapi3.Location) *yaml.Node {
	if loc.Line == 0 {
		return nil
	}
	if !w.read {
		w.read = true
		var root yaml.Node
		if yaml.Unmarshal(w.data, &root) == nil {
			w.values = map[[2]int]*yaml.Node{}
			w.index(&root, 0)
		}
	}
	return w.values[[2]int{loc.Line, loc.Column}]
}

// index records the value of every mapping's key by the key's place.
func (w *written) index(n *yaml.Node, depth int) {
	if depth > maxDepth {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			w.values[[2]int{k.Line, k.Column}] = n.Content[i+1]
		}
	}
	for _, c := range n.Content {
		w.index(c, depth+1)
	}
}

// sameJSON reports whether two JSON texts hold the same value, objects'
// members in any order.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ca, err1 := json.Marshal(x)
	cb, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// nodeJSON writes YAML nodes as compact JSON: mappings' keys in order,
// numbers as written when JSON spells them so. It refuses what JSON has no
// plain form of (merge keys, keys that are not strings, tags of its own),
// and stops past limit bytes.
type nodeJSON struct {
	b     bytes.Buffer
	limit int64
}

func (o *nodeJSON) write(n *yaml.Node, depth int) bool {
	if depth > maxDepth || int64(o.b.Len()) > o.limit {
		return false
	}
	switch n.Kind {
	case yaml.DocumentNode:
		return len(n.Content) == 1 && o.write(n.Content[0], depth+1)
	case yaml.AliasNode:
		return n.Alias != nil && o.write(n.Alias, depth+1)
	case yaml.MappingNode:
		o.b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return false // a merge key, or a key JSON cannot hold
			}
			if i > 0 {
				o.b.WriteByte(',')
			}
			o.str(k.Value)
			o.b.WriteByte(':')
			if !o.write(n.Content[i+1], depth+1) {
				return false
			}
		}
		o.b.WriteByte('}')
	case yaml.SequenceNode:
		o.b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				o.b.WriteByte(',')
			}
			if !o.write(c, depth+1) {
				return false
			}
		}
		o.b.WriteByte(']')
	case yaml.ScalarNode:
		return o.scalar(n)
	default:
		return false
	}
	return true
}

func (o *nodeJSON) scalar(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!null":
		o.b.WriteString("null")
	case "!!bool":
		var v bool
		if n.Decode(&v) != nil {
			return false
		}
		o.b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		if isJSONNumber(n.Value) {
			o.b.WriteString(n.Value)
			return true
		}
		var v any // 0x1F, 1_000, .5: JSON spells them otherwise
		if n.Decode(&v) != nil {
			return false
		}
		b, err := json.Marshal(v)
		if err != nil {
			return false // .inf, .nan
		}
		o.b.Write(b)
	case "!!str", "!!timestamp": // dates stay strings, as kin-openapi reads them
		o.str(n.Value)
	default:
		return false
	}
	return true
}

func (o *nodeJSON) str(s string) {
	enc := json.NewEncoder(&o.b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	o.b.Truncate(o.b.Len() - 1)
}

// isJSONNumber reports whether s is a number as JSON writes one.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
