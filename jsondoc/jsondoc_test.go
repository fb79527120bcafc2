package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
)

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     string
		isArray bool
		records []string
	}{
		{"empty array", `[]`, true, nil},
		{"spaced array", " [ 1 , \"a\" ,{\"b\" : [ ] } ]\n", true, []string{`1`, `"a"`, `{"b" : [ ] }`}},
		{"nested arrays", `[[1,[2]],[]]`, true, []string{`[1,[2]]`, `[]`}},
		{"object", `{"a":[1,2]}`, false, nil},
		{"string", `"x"`, false, nil},
		{"number", `-1.5e+3`, false, nil},
		{"literals", `[true,false,null]`, true, []string{`true`, `false`, `null`}},
		{"escapes", `["\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]`, true, []string{`"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`}},
		{"kept spelling", `[30.0, 1E2, -0]`, true, []string{`30.0`, `1E2`, `-0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := jsondoc.Parse([]byte(tc.doc))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d.IsArray() != tc.isArray {
				t.Errorf("IsArray = %v", d.IsArray())
			}
			var got []string
			for i := 0; i < d.Len(); i++ {
				got = append(got, string(d.Record(i)))
			}
			if !slices.Equal(got, tc.records) {
				t.Errorf("records = %q, want %q", got, tc.records)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
		msg       string
	}{
		{``, 1, 1, "unexpected end of input, expected a value"},
		{`[1,]`, 1, 4, "unexpected ']', expected a value"},
		{`{"a":1,}`, 1, 8, "unexpected '}', expected a string key"},
		{"[\n  {\"a\" 1}]", 2, 8, "unexpected '1', expected ':' after an object key"},
		{`[1 2]`, 1, 4, "unexpected '2', expected ',' or ']' in an array"},
		{`01`, 1, 2, "unexpected '1' after the top-level value"},
		{`[.5]`, 1, 2, "unexpected '.', expected a value"},
		{`[1.]`, 1, 4, "unexpected ']', expected a digit after the decimal point"},
		{`[1e]`, 1, 4, "unexpected ']', expected a digit in the exponent"},
		{`["a`, 1, 4, "unterminated string"},
		{"[\"a\tb\"]", 1, 4, "control character 0x09 in a string (escape it)"},
		{`["\x"]`, 1, 4, "invalid escape in a string"},
		{`["\u12g4"]`, 1, 7, "invalid \\u escape in a string"},
		{`[tru]`, 1, 5, "unexpected ']', expected 'true'"},
		{`[NaN]`, 1, 2, "unexpected 'N', expected a value"},
		{"\xef\xbb\xbf[]", 1, 1, "unexpected byte 0xEF (a byte order mark is not allowed), expected a value"},
		{strings.Repeat("[", 513) + strings.Repeat("]", 513), 1, 513, "nesting deeper than 512 levels"},
	} {
		_, err := jsondoc.Parse([]byte(tc.doc))
		var se *jsondoc.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%.20q) = %v, want a *SyntaxError", tc.doc, err)
			continue
		}
		if se.Line != tc.line || se.Column != tc.col || se.Msg != tc.msg {
			t.Errorf("Parse(%.20q) = line %d col %d %q, want line %d col %d %q", tc.doc, se.Line, se.Column, se.Msg, tc.line, tc.col, tc.msg)
		}
	}
	if _, err := jsondoc.Parse([]byte(strings.Repeat("[", 512) + strings.Repeat("]", 512))); err != nil {
		t.Errorf("512 levels should parse: %v", err)
	}
}

func TestResolve(t *testing.T) {
	doc := `[{"a":{"b":[{"c":1},{"c":[2,3]},{"d":4},5,[{"c":6}]]},"k\u00e9y":"v","dup":1,"dup":2},[1],"s"]`
	d, err := jsondoc.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// The same, with columns that walk the records (none kept).
	walking, _ := jsondoc.Parse([]byte(doc))
	walking.SetStructures(noRoom(t))
	for _, tc := range []struct {
		path   string
		want   []string
		fanned bool
	}{
		{"a.b.c", []string{`1`, `[2,3]`, `6`}, true},
		{"a.b.1.c", []string{`[2,3]`}, false},
		{"a.b.2", []string{`{"d":4}`}, false},
		{"a.b.9", nil, false},
		{"a.b", []string{`[{"c":1},{"c":[2,3]},{"d":4},5,[{"c":6}]]`}, false},
		{"kéy", []string{`"v"`}, false},
		{"dup", []string{`2`}, false},
		{"a.x", nil, false},
	} {
		for _, d := range []*jsondoc.Document{d, walking} {
			col := d.Column(jsondoc.NewPath(strings.Split(tc.path, ".")))
			var got []string
			for _, v := range col.AppendValues(nil, 0) {
				got = append(got, string(d.Text(v)))
			}
			if !slices.Equal(got, tc.want) || len(got) > 0 && col.Fanned(0) != tc.fanned {
				t.Errorf("%s: got %q fanned=%v, want %q fanned=%v", tc.path, got, col.Fanned(0), tc.want, tc.fanned)
			}
			// Elements that are not objects reach nothing.
			if len(col.AppendValues(nil, 1)) != 0 || len(col.AppendValues(nil, 2)) != 0 {
				t.Errorf("%s: non-object elements reached %v %v", tc.path, col.AppendValues(nil, 1), col.AppendValues(nil, 2))
			}
		}
	}
}

// noRoom returns a registry that keeps nothing: its pool has no room for
// what it would keep.
func noRoom(t *testing.T) *budget.Set {
	t.Helper()
	set, ok := budget.NewPool(1).NewSet(2, nil)
	if ok {
		t.Fatal("a set of 2 bytes fit a pool of 1")
	}
	return set
}

// fields returns a document of n records, each with fields f0 to f63
// holding the record's number.
func fields(n int) *jsondoc.Document {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for f := range 64 {
			if f > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"f%d":%d`, f, i)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	d, err := jsondoc.Parse([]byte(b.String()))
	if err != nil {
		panic(err)
	}
	return d
}

// A document whose columns together pass the bound of its cache keeps
// within it after every read: the columns least recently used leave (the
// document being read keeps its own bytes), one used again and again
// stays, and a column that is no longer kept is built again when asked,
// with the same values.
func TestColumnsWithinBound(t *testing.T) {
	const n = 2000
	d := fields(n)
	column := int64(8*n + 200) // packed, and about its overhead
	bound := d.MemoryBytes() + 10*column
	pool := budget.NewPool(bound)
	set, ok := pool.NewSet(d.MemoryBytes(), nil)
	if !ok {
		t.Fatal("no room for the document")
	}
	d.SetStructures(set)
	path := func(f int) jsondoc.Path { return jsondoc.NewPath([]string{fmt.Sprintf("f%d", f)}) }
	check := func(col *jsondoc.Column) {
		t.Helper()
		for _, i := range []int{0, n / 2, n - 1} {
			if v, ok := col.Value(i); !ok || string(d.Text(v)) != fmt.Sprint(i) {
				t.Fatalf("record %d: %q, %v", i, d.Text(v), ok)
			}
		}
	}
	hot := d.Column(path(0))
	first := map[int]*jsondoc.Column{}
	for f := 1; f < 64; f++ {
		col := d.Column(path(f))
		check(col)
		first[f] = col
		if used := pool.Used(); used > bound {
			t.Fatalf("after column f%d: %d bytes used, bound %d", f, used, bound)
		}
		if d.Column(path(0)) != hot { // used with every other: stays
			t.Fatalf("after column f%d: the column used most recently was dropped", f)
		}
	}
	if sets, items := pool.Evicted(); sets != 0 || items < 50 {
		t.Errorf("%d documents and %d columns dropped, want none and most columns", sets, items)
	}
	// The last ones are kept; the first, dropped, are built again.
	if d.Column(path(63)) != first[63] {
		t.Error("the column read last was not kept")
	}
	again := d.Column(path(1))
	check(again)
	if again == first[1] {
		t.Error("the column read first and never since is still kept")
	}
	if used := pool.Used(); used > bound || used != set.Bytes() {
		t.Errorf("%d bytes used (the set counts %d), bound %d", used, set.Bytes(), bound)
	}
}

// A column that cannot fit at all is not kept, and nothing leaves for it:
// the column that walks gives its values. The record digests, likewise.
func TestColumnTooLargeForBound(t *testing.T) {
	d := fields(500)
	bound := d.MemoryBytes() + 8*500/2
	pool := budget.NewPool(bound)
	set, _ := pool.NewSet(d.MemoryBytes(), nil)
	d.SetStructures(set)
	small := d.Column(jsondoc.NewPath([]string{"nothing"})) // reaches nothing: fits
	col := d.Column(jsondoc.NewPath([]string{"f7"}))
	if d.Column(jsondoc.NewPath([]string{"f7"})) == col {
		t.Error("a column larger than the bound was kept")
	}
	for i := range 500 {
		if v, ok := col.Value(i); !ok || string(d.Text(v)) != fmt.Sprint(i) {
			t.Fatalf("record %d: %q, %v", i, d.Text(v), ok)
		}
	}
	if d.Column(jsondoc.NewPath([]string{"nothing"})) != small {
		t.Error("a column that fits left for one that cannot")
	}
	if d.RecordSums() != nil {
		t.Error("record digests kept past the bound")
	}
	if used := pool.Used(); used > bound {
		t.Errorf("%d bytes used, bound %d", used, bound)
	}
}

func TestStringContent(t *testing.T) {
	for _, tc := range []string{
		`"plain"`, `"\u00e9t\u00c9"`, `"\ud83d\ude00 \ud800 x"`, `"\ud800\u0041"`, `"a\"b\\c\/d\n"`, `"\udc00\ud800"`,
	} {
		d, err := jsondoc.Parse([]byte(tc))
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal([]byte(tc), &want); err != nil {
			t.Fatal(err)
		}
		var scratch []byte
		if got := string(d.StringContent(d.Root(), &scratch)); got != want {
			t.Errorf("%s: got %q, want %q", tc, got, want)
		}
	}
}

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		text string
		ok   bool
	}{
		{"0", true}, {"-0", true}, {"30", true}, {"30.0", true}, {"3e1", true}, {"3E+1", true}, {"-1.5e-3", true},
		{"+30", false}, {".5", false}, {"0x1E", false}, {"NaN", false}, {"1.", false}, {"01", false},
		{"", false}, {"-", false}, {"1e", false}, {" 1", false}, {"1 ", false}, {"Infinity", false},
	} {
		if _, ok := jsondoc.ParseNumber([]byte(tc.text)); ok != tc.ok {
			t.Errorf("ParseNumber(%q) ok = %v, want %v", tc.text, ok, tc.ok)
		}
	}
}

func TestCompareDecimal(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"30", "30.0", 0}, {"30", "3e1", 0}, {"0.3e2", "30", 0}, {"-0", "0", 0}, {"0e10", "0.000", 0},
		{"1", "2", -1}, {"-1", "-2", 1}, {"-1", "0", -1}, {"0", "1e-400", -1}, {"-1e-400", "0", -1},
		{"12345678901234567890", "12345678901234567891", -1},
		{"1e400", "1e401", -1}, {"1.000000000000000000001", "1", 1},
		{"100", "1e2", 0}, {"0.05", "5e-2", 0}, {"123.456", "123.4560", 0}, {"123.456", "123.45", 1},
		// Exponents too long for an int64 stay exact.
		{"1e10000000000000000", "1e100000000000000000", -1},
		{"10e9999999999999999999", "1e10000000000000000000", 0},
		{"1e0000000000000000000000001", "10", 0},
		{"1e-99999999999999999999", "0", 1},
		{"-1e99999999999999999999", "-1e9", -1},
		{"0e99999999999999999999", "-0", 0},
		{"1.5e99999999999999999999", "1.4e99999999999999999999", 1},
	} {
		a, _ := jsondoc.ParseNumber([]byte(tc.a))
		b, _ := jsondoc.ParseNumber([]byte(tc.b))
		if got := jsondoc.CompareDecimal(a, b); got != tc.want {
			t.Errorf("CompareDecimal(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := jsondoc.CompareDecimal(b, a); got != -tc.want {
			t.Errorf("CompareDecimal(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

// FuzzParse checks Parse against encoding/json: the same documents are valid,
// and the records of an array are exactly its elements.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",{"b":[null,true]}]`, `{"a":1}`, `"\u00e9"`, `[1,]`, `[01]`, `-0.5e-3`, "[\"\\ud800\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := jsondoc.Parse(raw)
		valid := json.Valid(raw)
		if valid && err != nil && !strings.Contains(err.Error(), "nesting deeper") {
			t.Fatalf("Parse rejects valid JSON %q: %v", raw, err)
		}
		if !valid && err == nil {
			t.Fatalf("Parse accepts invalid JSON %q", raw)
		}
		if err != nil {
			return
		}
		var elems []json.RawMessage
		isArray := json.Unmarshal(raw, &elems) == nil && bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("["))
		if d.IsArray() != isArray {
			t.Fatalf("IsArray = %v for %q", d.IsArray(), raw)
		}
		if !isArray {
			return
		}
		if d.Len() != len(elems) {
			t.Fatalf("Len = %d, want %d for %q", d.Len(), len(elems), raw)
		}
		for i, e := range elems {
			if !bytes.Equal(d.Record(i), bytes.TrimSpace(e)) {
				t.Fatalf("record %d = %q, want %q", i, d.Record(i), e)
			}
		}
	})
}

// FuzzResolve checks the path walker on arbitrary documents and paths: it
// never panics, and every value it reaches is valid JSON taken from the
// document at its own span, of the kind it claims.
func FuzzResolve(f *testing.F) {
	f.Add([]byte(`[{"a":{"b":[{"c":1},{"c":[2,3]}]}},{"a":"x"}]`), "a.b.c")
	f.Add([]byte(`[{"a":[[{"b":1}]]}]`), "a.0.0.b")
	f.Add([]byte(`[{"k\u00e9":"\"v\""}]`), "ké")
	f.Fuzz(func(t *testing.T, raw []byte, path string) {
		d, err := jsondoc.Parse(raw)
		if err != nil || !d.IsArray() || path == "" {
			return
		}
		col := d.Column(jsondoc.NewPath(strings.Split(path, ".")))
		for i := 0; i < d.Len(); i++ {
			for _, v := range col.AppendValues(nil, i) {
				text := d.Text(v)
				if !json.Valid(text) {
					t.Fatalf("reached invalid JSON %q", text)
				}
				if !bytes.Contains(d.Record(i), text) {
					t.Fatalf("reached %q outside record %q", text, d.Record(i))
				}
				var x any
				dec := json.NewDecoder(bytes.NewReader(text))
				dec.UseNumber() // 1E1000 is a number, beyond float64
				_ = dec.Decode(&x)
				if got := kindOf(x); got != v.Kind {
					t.Fatalf("kind of %q = %v, claimed %v", text, got, v.Kind)
				}
				if v.Kind == jsondoc.String {
					var scratch []byte
					if s := d.StringContent(v, &scratch); string(s) != x.(string) && bytes.Equal(bytes.ToValidUTF8(s, []byte("\uFFFD")), s) {
						t.Fatalf("string %q decoded to %q, want %q", text, s, x)
					}
				}
				if v.Kind == jsondoc.Number {
					checkNumber(t, text)
				}
			}
		}
	})
}

func kindOf(x any) jsondoc.Kind {
	switch x := x.(type) {
	case nil:
		return jsondoc.Null
	case bool:
		if x {
			return jsondoc.True
		}
		return jsondoc.False
	case float64, json.Number:
		return jsondoc.Number
	case string:
		return jsondoc.String
	case []any:
		return jsondoc.Array
	case map[string]any:
		return jsondoc.Object
	}
	return jsondoc.Missing
}

// FuzzCompareDecimal checks exact numeric comparison against math/big.
func FuzzCompareDecimal(f *testing.F) {
	f.Add("30", "3e1")
	f.Add("-0.000", "0")
	f.Add("12345678901234567890", "1.2345678901234567891e19")
	f.Add("1e1000000000000000", "10e999999999999999") // one exponent fits an int64, the other not
	f.Add("-0e5", "0.0")
	f.Fuzz(func(t *testing.T, a, b string) {
		x, okA := jsondoc.ParseNumber([]byte(a))
		y, okB := jsondoc.ParseNumber([]byte(b))
		// ParseNumber accepts exactly the texts that are a JSON number alone.
		wantOK := json.Valid([]byte(a)) && a != "" && (a[0] == '-' || a[0] >= '0' && a[0] <= '9') && !strings.ContainsAny(a, " \t\r\n")
		if okA != wantOK {
			t.Fatalf("ParseNumber(%q) ok = %v, want %v", a, okA, wantOK)
		}
		// Equality indexes rely on this: equal keys for equal values only.
		if okA && okB {
			sameKey := string(x.AppendKey(nil)) == string(y.AppendKey(nil))
			if eq := jsondoc.CompareDecimal(x, y) == 0; sameKey != eq {
				t.Fatalf("%s and %s: same key %v, equal %v", a, b, sameKey, eq)
			}
		}
		if !okA || !okB || len(a) > 40 || len(b) > 40 || strings.ContainsAny(a+b, "eE") && (len(a) > 12 || len(b) > 12) {
			return
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if ra == nil || rb == nil {
			return
		}
		if got, want := jsondoc.CompareDecimal(x, y), ra.Cmp(rb); got != want {
			t.Fatalf("CompareDecimal(%s, %s) = %d, want %d", a, b, got, want)
		}
	})
}

func checkNumber(t *testing.T, text []byte) {
	t.Helper()
	n, ok := jsondoc.ParseNumber(text)
	if !ok {
		t.Fatalf("ParseNumber(%q) failed on a reached number", text)
	}
	if jsondoc.CompareDecimal(n, n) != 0 {
		t.Fatalf("%q is not equal to itself", text)
	}
}

// TestAppendQuoted: a string quoted by AppendQuoted parses, and its
// content reads back as the string, byte for byte (invalid UTF-8 too).
func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "café", "bad \xff\xfe utf-8", "</script>"} {
		raw := jsondoc.AppendQuoted([]byte("["), s)
		d, err := jsondoc.Parse(append(raw, ']'))
		if err != nil {
			t.Fatalf("%q quoted as %s: %v", s, raw, err)
		}
		var scratch []byte
		if got := string(d.StringContent(valueOf(d), &scratch)); got != s {
			t.Errorf("%q reads back as %q", s, got)
		}
	}
}

// valueOf returns the first element of an array document as a value.
func valueOf(d *jsondoc.Document) jsondoc.Value {
	return d.AppendElements(nil, d.Root())[0]
}

// TestAppendValues: the values a path reaches in one element, without a
// column.
func TestAppendValues(t *testing.T) {
	d, err := jsondoc.Parse([]byte(`[{"a":{"b":[1,{"c":2},{"c":[3]}]},"k":"v"},[{"a":1}],"x"]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int
		path string
		want []string
	}{
		{0, "k", []string{`"v"`}},
		{0, "a.b.c", []string{`2`, `[3]`}},
		{0, "a.b.0", []string{`1`}},
		{0, "a.x", nil},
		{1, "a", nil},
		{2, "a", nil},
	} {
		var got []string
		for _, v := range d.AppendValues(nil, tc.i, jsondoc.NewPath(strings.Split(tc.path, "."))) {
			got = append(got, string(d.Text(v)))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("element %d, %s: %q, want %q", tc.i, tc.path, got, tc.want)
		}
	}
}
