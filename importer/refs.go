package importer

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/oasdiff/yaml"
)

// maxRefChain bounds a chain of $refs each of which points at another
// $ref. kin-openapi resolves a chain in time that grows with the square of
// its length (2,000 links took 5 s of CPU), and a description of a few
// KiB can hold a long one; written ones hold a few links.
const maxRefChain = 100

// checkRefChains refuses a description holding a chain of more than
// maxRefChain local $refs, before kin-openapi resolves it. It reads the
// description as kin-openapi does: as JSON, else through its YAML library
// (which turns YAML into JSON, keys that are not strings included); one
// neither reads is left to kin-openapi to refuse. It returns the
// description as JSON values (numbers as written, json.Number), and
// whether it is JSON.
func checkRefChains(data []byte) (doc any, isJSON bool, err error) {
	useNumber := func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }
	if isJSON = json.Valid(data); isJSON {
		if useNumber(json.NewDecoder(bytes.NewReader(data))).Decode(&doc) != nil {
			return nil, false, nil
		}
	} else if _, err := yaml.Unmarshal(data, &doc, yaml.DecodeOpts{DisableTimestamps: true}, useNumber); err != nil {
		return nil, false, nil
	}
	links := map[string]int{} // by $ref: the links of its chain; 0 while followed
	var length func(ref string, depth int) int
	length = func(ref string, depth int) int {
		if n, ok := links[ref]; ok {
			return max(n, 1) // 0: a cycle, which kin-openapi refuses itself
		}
		if depth > maxRefChain {
			return 1
		}
		links[ref] = 0
		n := 1
		if next, ok := refAt(doc, ref); ok {
			n += length(next, depth+1)
		}
		links[ref] = n
		return n
	}
	var found string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if found != "" || depth > maxDepth {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && length(ref, 0) > maxRefChain {
				found = ref
				return
			}
			for _, c := range v {
				walk(c, depth+1)
			}
		case []any:
			for _, c := range v {
				walk(c, depth+1)
			}
		}
	}
	walk(doc, 0)
	if found != "" {
		return nil, isJSON, decoy.Errorf(decoy.EINVALID, "Invalid OpenAPI description: a chain of more than %d $refs, each pointing at another, from %s", maxRefChain, clip(found))
	}
	return doc, isJSON, nil
}

// refAt returns the $ref of the object a local $ref ("#/a/b") points at,
// if it is one.
func refAt(doc any, ref string) (string, bool) {
	segs, ok := pointerOf(ref)
	if !ok {
		return "", false
	}
	v := doc
	for _, seg := range segs {
		switch c := v.(type) {
		case map[string]any:
			if v, ok = c[seg]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return "", false
			}
			v = c[i]
		default:
			return "", false
		}
	}
	m, _ := v.(map[string]any)
	next, ok := m["$ref"].(string)
	return next, ok
}

// pointerOf returns the JSON pointer of a local $ref as segments, read as
// kin-openapi reads it: the URL's fragment, percent-decoded, split at "/",
// each part with ~1 and ~0 unescaped.
func pointerOf(ref string) ([]string, bool) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "" {
		return nil, false // not in this description: refused anyway
	}
	path, ok := strings.CutPrefix(u.Fragment, "/")
	if !ok {
		return nil, false
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	}
	return segs, true
}
