package query

import (
	"bytes"
	"math"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
)

// Records by id (§12 of the contract): a write finds the record it replaces,
// updates or deletes as an item route finds the record it reads, by the
// equality of filters (§1.3): the first record whose id field equals the
// key, through the kept index of that field when there is one.

// Match is the condition "field equals key" of a write: key is the id as
// JSON text (42, "a7"), compared as the filter field=<its text> compares (a
// string by its content: "42" and 42 find the same records, as the path
// /users/42 of an item route does).
type Match struct {
	c Condition
}

// NewMatch returns the match of field and key, or false when key is not
// one JSON scalar.
func NewMatch(field []string, key []byte) (*Match, bool) {
	text, ok := keyText(key)
	if !ok || len(field) == 0 {
		return nil, false
	}
	m := &Match{c: Condition{Path: field, Op: OpEq, Value: text, path: jsondoc.NewPath(field)}}
	m.c.num, m.c.isNum = jsondoc.ParseNumber([]byte(text))
	m.c.keys = conditionKeys(&m.c)
	return m, true
}

// keyText returns the text of a JSON scalar as a filter's value spells it:
// a string's content, any other scalar's text.
func keyText(key []byte) (string, bool) {
	key = bytes.TrimSpace(key)
	if len(key) == 0 {
		return "", false
	}
	d, err := jsondoc.Parse(key)
	if err != nil {
		return "", false
	}
	switch v := d.Root(); v.Kind {
	case jsondoc.Object, jsondoc.Array:
		return "", false
	case jsondoc.String:
		var scratch []byte
		return string(d.StringContent(v, &scratch)), true
	}
	return string(key), true
}

// Keys returns the index keys of the values the match finds (see
// RecordKeys): a record is found when one of its keys is among them.
func (m *Match) Keys() []string { return m.c.keys }

// Path returns the match's field.
func (m *Match) Path() jsondoc.Path { return m.c.path }

// Find returns the first record of the array document d whose field equals
// the key, and whether there is one: through the kept equality index of the
// field, else by a pass over its column.
func (m *Match) Find(d *jsondoc.Document) (int, bool) {
	if ix := equalityIndex(d, m.c.path, false); ix != nil {
		ids, _ := ix.lookup(&m.c)
		if len(ids) == 0 {
			return 0, false
		}
		return int(ids[0]), true
	}
	col := d.Column(m.c.path)
	mt := matcher{c: &m.c}
	var vals []jsondoc.Value
	for i := range col.Len() {
		vals = col.AppendValues(vals[:0], i)
		if mt.anyEqual(d, vals) {
			return i, true
		}
	}
	return 0, false
}

// Holds reports whether record i of d is found by the match.
func (m *Match) Holds(d *jsondoc.Document, i int) bool {
	mt := matcher{c: &m.c}
	return mt.anyEqual(d, d.AppendValues(nil, i, m.c.path))
}

// FindRecord returns the first record of the array document d (a
// collection: the data, or an item view) whose field (a path) equals key,
// the id as JSON text, with the equality of filters; false when none does,
// or key is not a JSON scalar.
func FindRecord(d *jsondoc.Document, field []string, key []byte) (int, bool) {
	m, ok := NewMatch(field, key)
	if !ok {
		return 0, false
	}
	return m.Find(d)
}

// RecordKeys appends to dst the index keys of the values path p reaches in
// record i of d (a top-level array it reaches by its scalar elements), as
// the equality index lists the record under: a Match finds the record
// exactly when one of these is among its Keys.
func RecordKeys(dst []string, d *jsondoc.Document, i int, p jsondoc.Path) []string {
	return valueKeys(dst, d, i, p, false)
}

// kindNextID names the next integer id among a document's structures.
const kindNextID = "next-id"

// nextID is what the next integer id of a collection comes from, kept:
// its records, those whose id is not an integer (bad), and the largest of
// the integer ones (ints of them).
type nextID struct {
	n, bad, ints int
	largest      int64
}

// result returns the next id, and whether there is one.
func (x *nextID) result() (int64, bool) {
	switch {
	case x.n == 0:
		return 1, true
	case x.bad > 0 || x.largest == math.MaxInt64:
		return 0, false
	}
	return x.largest + 1, true
}

// add counts a record whose id is id (an integer when ok).
func (x *nextID) add(id int64, ok bool) {
	x.n++
	if !ok {
		x.bad++
		return
	}
	if x.ints == 0 || id > x.largest {
		x.largest = id
	}
	x.ints++
}

// remove takes a record whose id is id (an integer when ok) out of the
// count, and reports whether it could: not the largest id, which the
// others do not know the next of.
func (x *nextID) remove(id int64, ok bool) bool {
	switch {
	case !ok:
		x.bad--
	case id == x.largest:
		return false
	default:
		x.ints--
	}
	x.n--
	return true
}

// NextIntID returns the id a created record gets (§12.1) in the collection
// d by its id field: one more than the largest id, when every record's id
// is an integer (1 in an empty collection); false when some record's is
// not (or is missing), or the next would not fit. Worked out once per
// document and kept.
func NextIntID(d *jsondoc.Document, field []string) (int64, bool) {
	p := jsondoc.NewPath(field)
	if len(field) == 0 {
		return 0, false
	}
	key := d.Key(kindNextID, p.Key)
	x, _ := d.Structures().Load(key, func(b *budget.Build) any {
		if !b.Reserve(48) {
			return nil
		}
		d.Carrier(key, func(n *jsondoc.Document) { NextIntID(n, field) })
		if x := carryNextID(d, key, p); x != nil {
			return x
		}
		return scanNextID(d, p)
	}).(*nextID)
	if x == nil {
		x = scanNextID(d, p)
	}
	return x.result()
}

// carryNextID returns the count of NextIntID carried over from the one kept
// for d's origin, or nil.
func carryNextID(d *jsondoc.Document, key budget.Key, p jsondoc.Path) *nextID {
	o := d.Origin()
	if o == nil || len(p.Segs) != 1 {
		return nil
	}
	prev, _ := o.Doc.Structures().Get(key).(*nextID)
	if prev == nil {
		return nil
	}
	x := *prev
	if o.Op != jsondoc.EditAppend && !x.remove(recordID(o.Doc, o.Index, p)) {
		return nil
	}
	if o.Op != jsondoc.EditDelete {
		x.add(recordID(d, o.Index, p))
	}
	return &x
}

// recordID returns the id of record i of d by the one-segment path p,
// when it is an integer.
func recordID(d *jsondoc.Document, i int, p jsondoc.Path) (int64, bool) {
	vals := d.AppendValues(nil, i, p)
	if len(vals) != 1 {
		return 0, false
	}
	return IntID(d.Text(vals[0]), vals[0].Kind)
}

// scanNextID counts NextIntID over every record.
func scanNextID(d *jsondoc.Document, p jsondoc.Path) *nextID {
	col := d.Column(p)
	x := &nextID{}
	for i := range col.Len() {
		v, one := col.Value(i)
		if !one || col.Fanned(i) {
			x.add(0, false)
			continue
		}
		x.add(IntID(d.Text(v), v.Kind))
	}
	return x
}

// maxExactInt is the largest integer every float64 up to it holds exactly.
const maxExactInt = 1 << 53

// IntID returns the integer a JSON value of kind k and text is, when it is
// a number with an integer value (42, 42.0, 4.2e1) within ±2^53.
func IntID(text []byte, k jsondoc.Kind) (int64, bool) {
	if k != jsondoc.Number {
		return 0, false
	}
	n, ok := jsondoc.ParseNumber(text)
	if !ok {
		return 0, false
	}
	f, exact := n.Float()
	if !exact || f != math.Trunc(f) || math.Abs(f) > maxExactInt {
		return 0, false
	}
	return int64(f), true
}
