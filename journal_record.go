package decoy

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// The record of a journal entry: the entry in a compact binary form, as
// the journal queues and stores it (§13.2). The server writes a request's
// record straight from the request, on the answer's path, with neither an
// entry nor a map of its headers (JournalRecord.Append, then
// AppendJournalHeader for each header); a listing reads it back as the
// entry (ParseJournalRecord). A record is, in order:
//
//	version (1 byte, recordVersion) and flags (1 byte: BodyCut, Forwarded)
//	At: Unix seconds (varint) and nanoseconds (uvarint)
//	Status (varint), DurationMS (8 bytes, its IEEE 754 bits, little-endian)
//	Method, Path, Query, RouteID, MockID, Rule, Client, Body: each its
//	  length (uvarint) and bytes
//	the number of headers plus one (uvarint; 0: Headers is nil), then
//	  each header's name and value, as the strings above
//
// A name may come twice: the later value is the entry's. The ID is not
// in it: the store gives it.

const recordVersion = 1

// The flags of a record.
const (
	recordBodyCut = 1 << iota
	recordForwarded
)

// JournalRecord is what a record holds but the headers and the body: the
// fields of an entry that a caller has without making one.
type JournalRecord struct {
	At                    time.Time
	Method, Path, Query   string
	BodyCut               bool
	RouteID, MockID, Rule string
	Status                int
	DurationMS            float64
	Client                string
	Forwarded             bool
}

// Append appends to b the record of r with body, up to its headers:
// headers is the number that follow, each appended by
// AppendJournalHeader (-1: none, an entry whose Headers is nil).
func (r *JournalRecord) Append(b []byte, body []byte, headers int) []byte {
	b = appendRecordString(r.appendHead(b), body)
	return binary.AppendUvarint(b, uint64(headers+1))
}

// AppendJournalHeader appends a header of a record to b: its name, and
// its values joined with ", ".
func AppendJournalHeader(b []byte, name string, values ...string) []byte {
	if len(values) == 1 { // most headers
		return AppendJournalHeaderValue(b, name, values[0])
	}
	b = appendRecordString(b, name)
	n := 0
	for i, v := range values {
		if i > 0 {
			n += 2
		}
		n += len(v)
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i, v := range values {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, v...)
	}
	return b
}

// AppendJournalHeaderValue is AppendJournalHeader of a header of one
// value, small enough to be inlined in a loop over a request's headers.
func AppendJournalHeaderValue(b []byte, name, value string) []byte {
	return appendRecordString(appendRecordString(b, name), value)
}

// AppendRecord appends the record of e to b (its ID aside).
func (e *JournalEntry) AppendRecord(b []byte) []byte {
	r := JournalRecord{At: e.At, Method: e.Method, Path: e.Path, Query: e.Query, BodyCut: e.BodyCut,
		RouteID: e.RouteID, MockID: e.MockID, Rule: e.Rule, Status: e.Status, DurationMS: e.DurationMS,
		Client: e.Client, Forwarded: e.Forwarded}
	headers := -1
	if e.Headers != nil {
		headers = len(e.Headers)
	}
	b = appendRecordString(r.appendHead(b), e.Body)
	b = binary.AppendUvarint(b, uint64(headers+1))
	for name, value := range e.Headers {
		b = AppendJournalHeader(b, name, value)
	}
	return b
}

// appendHead appends the record of r up to its body. (Not generic over
// the body's type: escape analysis sees through no generic function of
// another package, whose r would be moved to the heap.)
func (r *JournalRecord) appendHead(b []byte) []byte {
	var flags byte
	if r.BodyCut {
		flags |= recordBodyCut
	}
	if r.Forwarded {
		flags |= recordForwarded
	}
	b = append(b, recordVersion, flags)
	b = binary.AppendVarint(b, r.At.Unix())
	b = binary.AppendUvarint(b, uint64(r.At.Nanosecond()))
	b = binary.AppendVarint(b, int64(r.Status))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.DurationMS))
	for _, s := range [...]string{r.Method, r.Path, r.Query, r.RouteID, r.MockID, r.Rule, r.Client} {
		b = appendRecordString(b, s)
	}
	return b
}

func appendRecordString[T string | []byte](b []byte, s T) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errRecord answers a record that is not one.
var errRecord = errors.New("not a journal record")

// ParseJournalRecord reads a record (AppendRecord's, or JournalRecord's
// with its headers) back as its entry: At in UTC, and no ID.
func ParseJournalRecord(b []byte) (*JournalEntry, error) {
	if len(b) < 2 || b[0] != recordVersion {
		return nil, errRecord
	}
	// One string holds the record's text: its fields are slices of it.
	d := recordDecoder{s: string(b), i: 2}
	flags := b[1]
	sec, nsec := d.varint(), d.uvarint()
	status := d.varint()
	duration := d.float()
	if nsec >= uint64(time.Second) || status != int64(int(status)) {
		d.bad = true
	}
	e := &JournalEntry{
		At:         time.Unix(sec, int64(nsec)).UTC(),
		Status:     int(status),
		DurationMS: duration,
		BodyCut:    flags&recordBodyCut != 0,
		Forwarded:  flags&recordForwarded != 0,
	}
	for _, f := range [...]*string{&e.Method, &e.Path, &e.Query, &e.RouteID, &e.MockID, &e.Rule, &e.Client, &e.Body} {
		*f = d.string()
	}
	if headers := d.uvarint(); headers > 0 && !d.bad {
		// Each header takes two bytes at least: a count past what is
		// left is not a record's, and makes no map of its size.
		n := headers - 1
		if n > uint64(len(d.s)-d.i)/2 {
			return nil, errRecord
		}
		e.Headers = make(map[string]string, n)
		for range n {
			name := d.string()
			e.Headers[name] = d.string()
		}
	}
	if d.bad || d.i != len(d.s) {
		return nil, errRecord
	}
	return e, nil
}

// recordDecoder reads the fields of a record in turn; bad is set, and
// zero values read, once one is cut or malformed.
type recordDecoder struct {
	s   string
	i   int
	bad bool
}

func (d *recordDecoder) uvarint() uint64 {
	var v uint64
	for shift := uint(0); !d.bad; shift += 7 {
		if d.i == len(d.s) || shift > 63 {
			break
		}
		c := d.s[d.i]
		d.i++
		if shift == 63 && c > 1 {
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	d.bad = true
	return 0
}

func (d *recordDecoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *recordDecoder) float() float64 {
	if d.bad || len(d.s)-d.i < 8 {
		d.bad = true
		return 0
	}
	var u uint64
	for k := range 8 {
		u |= uint64(d.s[d.i+k]) << (8 * k)
	}
	d.i += 8
	return math.Float64frombits(u)
}

func (d *recordDecoder) string() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}
