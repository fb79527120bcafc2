package jsondoc

import "bytes"

// Members of one JSON object read as written, without a parse of the
// document: for a write's record and body, which the caller validated
// (encoding/json's Valid, or a parse). On text that is not valid JSON they
// answer false rather than read past it, but do not say why.

// Member is one member of an object: its key as written (with its quotes),
// the key decoded (Key: the text between the quotes when it holds no
// escape), and its value as written.
type Member struct {
	RawKey []byte
	Key    []byte
	Value  []byte
}

// AppendMembers appends the members of obj, a JSON object (whitespace
// around it allowed), to dst in order, and reports whether obj is one.
// A decoded key is appended to *keys, which the keys returned share.
func AppendMembers(dst []Member, keys *[]byte, obj []byte) ([]Member, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return dst, false
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return dst, true
	}
	for {
		m, next, ok := scanMember(obj, i, keys)
		if !ok {
			return dst, false
		}
		dst = append(dst, m)
		i = next
		if obj[i] == '}' {
			return dst, true
		}
		i = skipWS(obj, i+1)
	}
}

// scanMember reads the member whose key starts at i, and returns it with
// the index of the ',' or '}' after it.
func scanMember(obj []byte, i int, keys *[]byte) (m Member, next int, ok bool) {
	kend, ok := scanString(obj, i)
	if !ok {
		return m, 0, false
	}
	m.RawKey = obj[i:kend]
	content := obj[i+1 : kend-1]
	if bytes.IndexByte(content, '\\') < 0 {
		m.Key = content
	} else {
		if !validEscapes(content) {
			return m, 0, false
		}
		if keys == nil {
			m.Key = appendUnquoted(nil, content)
		} else {
			start := len(*keys)
			*keys = appendUnquoted(*keys, content)
			m.Key = (*keys)[start:len(*keys):len(*keys)]
		}
	}
	i = skipWS(obj, kend)
	if i >= len(obj) || obj[i] != ':' {
		return m, 0, false
	}
	i = skipWS(obj, i+1)
	vend, ok := scanValue(obj, i)
	if !ok {
		return m, 0, false
	}
	m.Value = obj[i:vend]
	i = skipWS(obj, vend)
	if i >= len(obj) || obj[i] != ',' && obj[i] != '}' {
		return m, 0, false
	}
	return m, i, true
}

// MemberText returns the text of the value at path in obj, a JSON object
// (each segment a member's key, decoded; the last of duplicate keys wins,
// as in a parser), or false when there is none.
func MemberText(obj []byte, path []string) ([]byte, bool) {
	cur := obj
	for _, seg := range path {
		i := skipWS(cur, 0)
		if i >= len(cur) || cur[i] != '{' {
			return nil, false
		}
		i = skipWS(cur, i+1)
		if i < len(cur) && cur[i] == '}' {
			return nil, false
		}
		var found []byte
		for {
			m, next, ok := scanMember(cur, i, nil)
			if !ok {
				return nil, false
			}
			if string(m.Key) == seg {
				found = m.Value
			}
			if cur[next] == '}' {
				break
			}
			i = skipWS(cur, next+1)
		}
		if found == nil {
			return nil, false
		}
		cur = found
	}
	return cur, true
}

// scanString returns the end of the string whose opening quote is at i.
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// Escaped when an odd number of backslashes come before it.
		bs := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// scanValue returns the end of the value that starts at i.
func scanValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := scanString(b, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', ']', '}', ':', '"', '{', '[', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return j, j > i
}

// validEscapes reports whether every escape of a string's content is one
// JSON has (so that appendUnquoted reads within it).
func validEscapes(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) {
			return false
		}
		switch s[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+6 > len(s) {
				return false
			}
			for _, c := range s[i+2 : i+6] {
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
					return false
				}
			}
			i += 5
		default:
			return false
		}
	}
	return true
}
