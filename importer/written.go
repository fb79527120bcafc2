package importer

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	yaml "github.com/oasdiff/yaml3"
)

// This file keeps an example as its description writes it: its keys in
// their order and its numbers as spelled. kin-openapi gives an example as
// a Go value, whose maps have no order, and where it was written; the
// description read again as a tree of YAML nodes (kin-openapi's own YAML
// parser, which reads JSON too) holds it in order.

// written is a description as kin-openapi read it, with its tree of
// nodes and the value nodes of its mappings by the place of their key,
// each read on first use.
type written struct {
	data   []byte
	parsed bool
	root   *yaml.Node // nil: not YAML
	read   bool
	values map[[2]int]*yaml.Node // by the line and column of their key
}

// tree returns the description's tree of nodes, or nil if YAML cannot
// read it.
func (w *written) tree() *yaml.Node {
	if !w.parsed {
		w.parsed = true
		var root yaml.Node
		if yaml.Unmarshal(w.data, &root) == nil {
			w.root = &root
		}
	}
	return w.root
}

// maxWrittenDepth bounds the nesting followed in the tree, as
// exampleOrders bounds it.
const maxWrittenDepth = maxDepth

// example returns, as JSON, the value written after the key at loc
// (kin-openapi's place of a field), if it means exactly what value (the
// example as kin-openapi read it) means; else nil, and the caller encodes
// value itself. At most limit bytes are written: aliases cannot make more.
func (w *written) example(loc openapi3.Location, value any, limit int64) []byte {
	if w == nil || loc.Line == 0 {
		return nil
	}
	if !w.read {
		w.read = true
		if root := w.tree(); root != nil {
			w.values = map[[2]int]*yaml.Node{}
			w.index(root, 0)
		}
	}
	n := w.values[[2]int{loc.Line, loc.Column}]
	if n == nil {
		return nil
	}
	out := nodeJSON{limit: limit}
	if !out.write(n, 0) {
		return nil
	}
	// Only the order and spelling may differ from what kin-openapi read.
	want, err := json.Marshal(value)
	if err != nil || !sameJSON(out.b.Bytes(), want) {
		return nil
	}
	return out.b.Bytes()
}

// index records the value of every mapping's key by the key's place.
func (w *written) index(n *yaml.Node, depth int) {
	if depth > maxWrittenDepth {
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
	if depth > maxWrittenDepth || int64(o.b.Len()) > o.limit {
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
