package generate

import (
	"strconv"

	"github.com/brianvoe/gofakeit/v7/data"
)

// The functions used most write their text straight into the output.
// gofakeit finds each word list by name in nested maps on every call,
// and returns a new string; here each list is looked up once, when the
// package starts, and words are appended to the output as they are
// picked. The draws are gofakeit's own, one for one, so that a seed
// gives the same data as through gofakeit.

// wordList is one of gofakeit's word lists; plain says that none of its
// words needs escaping in a JSON string.
type wordList struct {
	words []string
	plain bool
}

func list(category, name string) *wordList {
	l := &wordList{words: data.Data[category][name], plain: true}
	if len(l.words) == 0 {
		panic("generate: gofakeit has no word list " + category + "." + name)
	}
	for _, w := range l.words {
		if string(appendStringContent(nil, w)) != w {
			l.plain = false
		}
	}
	return l
}

var (
	firstNames   = list("person", "first")
	lastNames    = list("person", "last")
	domainSuffix = list("internet", "domain_suffix")
	cities       = list("address", "city")
	states       = list("address", "state")
	countries    = list("address", "country")
	countryCodes = list("address", "country_abr")
	zips         = list("address", "zip")
	companies    = list("company", "name")
	colors       = list("color", "full")
	currencies   = list("currency", "short")
	jobTitles    = list("job", "title")
	categories   = list("product", "category")
	loremWords   = list("lorem", "word")
)

// pick draws a word as gofakeit does.
func (g *gen) pick(l *wordList) string {
	return l.words[g.intN(len(l.words))]
}

// appendWord appends a word picked from l, escaped for a JSON string.
func (g *gen) appendWord(b []byte, l *wordList) []byte {
	w := g.pick(l)
	if l.plain {
		return append(b, w...)
	}
	return appendStringContent(b, w)
}

// appendLower appends w in lower case (ASCII letters), escaped.
func appendLower(b []byte, w string, plain bool) []byte {
	if !plain {
		w = lowerASCII(w)
		return appendStringContent(b, w)
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func lowerASCII(w string) string {
	b := []byte(w)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// appendFirstLower appends the first byte of w, in lower case.
func appendFirstLower(b []byte, w string, plain bool) []byte {
	if w == "" {
		return b
	}
	return appendLower(b, w[:1], plain && w[0] < 0x80)
}

// appendEmail appends an email address as gofakeit's Email makes it:
// first and last names, a domain from the last names and a suffix, then
// one draw for the style of the local part and an optional number.
func (g *gen) appendEmail(b []byte) []byte {
	first, last := g.pick(firstNames), g.pick(lastNames)
	domain, suffix := g.pick(lastNames), g.pick(domainSuffix)
	pf, pl := firstNames.plain, lastNames.plain
	mix := g.src.Uint64()
	w := mix % 100
	mix /= 100
	switch {
	case w < 38:
		b = appendLower(appendLower(b, first, pf), last, pl)
	case w < 66:
		b = appendLower(append(appendLower(b, first, pf), '.'), last, pl)
	case w < 80:
		b = appendLower(appendFirstLower(b, first, pf), last, pl)
	case w < 88:
		b = appendFirstLower(appendLower(b, first, pf), last, pl)
	case w < 94:
		b = appendLower(append(appendLower(b, first, pf), '_'), last, pl)
	default:
		b = appendLower(append(appendLower(b, first, pf), '-'), last, pl)
	}
	if mix%100 < 10 {
		mix /= 100
		sub := mix % 100
		if sub < 30 {
			b = append(b, byte('0'+byte(2+sub%8)))
		} else {
			b = strconv.AppendInt(b, int64(sub%90+10), 10)
		}
	}
	b = appendLower(append(b, '@'), domain, pl)
	b = append(b, '.')
	if domainSuffix.plain {
		return append(b, suffix...)
	}
	return appendStringContent(b, suffix)
}

// appendDigits appends pattern with each # a digit, as gofakeit's
// replaceWithNumbers does (a leading 0 becomes 1 to 8).
func (g *gen) appendDigits(b []byte, pattern string, plain bool) []byte {
	if pattern == "" {
		return b
	}
	start := len(b)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '#' {
			c = byte(g.intN(10)) + '0'
		}
		b = append(b, c)
	}
	if b[start] == '0' {
		b[start] = byte(g.intN(8)+1) + '0'
	}
	if !plain {
		s := string(b[start:])
		return appendStringContent(b[:start], s)
	}
	return b
}

// appendTime appends a time from a[0] to a[1] (as prepareDates made
// them) in layout.
func (g *gen) appendTime(b []byte, a []value, layout string) []byte {
	return randomTime(g, a).AppendFormat(b, layout)
}

// words makes a function of no arguments that picks a word of a list.
func words(category, name, desc string, l *wordList) *Function {
	return appending(category, name, desc, func(g *gen, b []byte, _ []value) []byte { return g.appendWord(b, l) })
}

// appending makes a function of no arguments that appends a string.
func appending(category, name, desc string, f func(g *gen, b []byte, a []value) []byte) *Function {
	return &Function{Name: name, Category: category, Description: desc, Returns: "string", Example: "{{ " + name + " }}", text: f}
}

// runText is run for a function that appends its text: the text as a
// string value.
func (fn *Function) runText(g *gen, a []value) value {
	b := fn.text(g, nil, a)
	// The text is escaped for JSON: read it back.
	return str(unescapeContent(b))
}

// runNum is run for a function that appends a number.
func (fn *Function) runNum(g *gen, a []value) value {
	f, _ := strconv.ParseFloat(string(fn.num(g, nil, a)), 64)
	return number(f)
}

// unescapeContent turns the inside of a JSON string back into its text.
func unescapeContent(b []byte) string {
	for _, c := range b {
		if c == '\\' {
			s, err := strconv.Unquote(`"` + string(b) + `"`)
			if err == nil {
				return s
			}
			break
		}
	}
	return string(b)
}
