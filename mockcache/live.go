package mockcache

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// Live data (§12 of the contract): an entry holds its mock's live data,
// numbered as decoy.LiveStore numbers it (LiveSeq). A write makes a new
// entry from the one it was computed on (Apply), which the cache installs
// when it is newer than what it holds (PutLive); writes another replica
// made are applied to the cached entry (CatchUp, Advance), never by loading
// the mock again unless they are gone from the store's log.

// Bytes returns the entry's whole data: as stored, or as writes left it
// (assembled when first asked for, and kept while the cache's bound has
// room). The caller must not change it, nor use it once its reference is
// released.
func (e *Entry) Bytes() []byte {
	if e.Doc != nil {
		return e.Doc.Whole()
	}
	return e.data
}

// Size returns the length of the entry's data (its live data's).
func (e *Entry) Size() int64 {
	if e.Doc != nil {
		return e.Doc.Size()
	}
	return int64(len(e.data))
}

// LiveSeq returns the number of the live data the entry holds.
func (e *Entry) LiveSeq() int64 { return e.liveSeq }

// liveMock returns the description of the entry's data from m, the store's
// description of the mock and its current version's data: m itself when
// the entry holds that data at m's number, else a copy with the live
// data's size, number and entity tag (see liveETag).
func (e *Entry) liveMock(m *decoy.Mock) *decoy.Mock {
	if !e.edited && m.LiveSeq == e.liveSeq {
		return m
	}
	c := *m
	c.LiveSeq = e.liveSeq
	if e.edited {
		c.Size = e.Size()
		c.ETag = liveETag(m.ETag, e.liveSeq)
	}
	return &c
}

// liveETag returns the entity tag of live data number seq of data whose
// stored tag is etag: a number names one state of a mock's live data (see
// decoy.LiveStore), so every replica gives that state the same tag, and no
// other state has it.
func liveETag(etag string, seq int64) string {
	var b [8]byte
	h := xxhash.New()
	h.WriteString(etag)
	h.WriteString("|live|")
	h.WriteString(strconv.FormatInt(seq, 10))
	return `"` + hex.EncodeToString(h.Sum(b[:0])) + `"`
}

// errNotCollection is the error of a write on data that is not an array of
// objects at its items (§12.1).
func errNotCollection() error { return decoy.Errorf(decoy.ECONFLICT, "Data is not a collection") }

// errNotFound is the error of a write whose record is not there.
func errNotFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Not found") }

// splitPath splits a dot path ("": none).
func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// checkRecord returns the record of a write trimmed of the whitespace
// around it, and whether it is one JSON object.
func checkRecord(rec []byte) ([]byte, error) {
	rec = bytes.Trim(rec, " \t\r\n")
	if !utf8.Valid(rec) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid record: not valid UTF-8")
	}
	d, err := jsondoc.Parse(rec)
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid record: %v", err)
	}
	if d.Root().Kind != jsondoc.Object {
		return nil, decoy.Errorf(decoy.EINVALID, "Body must be a JSON object")
	}
	return rec, nil
}

// Collection returns the collection that writes with items (a dot path)
// change, as a document whose records are its elements, or ECONFLICT "Data
// is not a collection" when the data holds no array of objects there.
func (e *Entry) Collection(items string) (*jsondoc.Document, error) {
	d, ok := e.Records(splitPath(items))
	if !ok || !d.Objects() {
		return nil, errNotCollection()
	}
	return d, nil
}

// editor returns an editor of e's collection at items.
func (e *Entry) editor(items string) (*jsondoc.Editor, error) {
	if e.Doc == nil {
		return nil, errNotCollection()
	}
	ed, ok := e.Doc.Editor(splitPath(items))
	if !ok || !ed.Objects() {
		return nil, errNotCollection()
	}
	return ed, nil
}

// Apply returns a new entry holding e's data with w applied, numbered
// w.Seq, which must be the number after e's (else ECONFLICT: the caller
// catches up first). e does not change: readers may hold it. The new entry
// comes with one reference, the caller's, to Release; it is not cached
// (see PutLive).
//
// w.Items is the dot path of the collection ("" the data itself); a create
// appends w.Record as the last record; a replace or an update replaces the
// first record whose w.Field (a dot path) equals w.Key (JSON text, compared
// as filters compare: see query.FindRecord) by w.Record; a delete removes
// it. Every other byte of the data stays as stored (see jsondoc.Editor for
// the separators). Errors: ECONFLICT "Data is not a collection" when the
// data holds no array of objects at w.Items, ENOTFOUND "Not found" when no
// record has the key, EINVALID for a record that is not one JSON object or
// an unknown operation.
func (e *Entry) Apply(w *decoy.Write) (*Entry, error) { return e.apply(w, checkRecord) }

// ApplyPlanned is Apply for a write whose record its caller made one JSON
// object, without whitespace around it (a body it validated, or a merge
// of such with a record of the data): the record is checked to be valid
// UTF-8, not parsed again.
func (e *Entry) ApplyPlanned(w *decoy.Write) (*Entry, error) { return e.apply(w, checkUTF8) }

// checkUTF8 returns the record of a planned write, when it is valid UTF-8.
func checkUTF8(rec []byte) ([]byte, error) {
	if !utf8.Valid(rec) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid record: not valid UTF-8")
	}
	return rec, nil
}

// apply is Apply, checking a record with check.
func (e *Entry) apply(w *decoy.Write, check func([]byte) ([]byte, error)) (*Entry, error) {
	if w.Seq != e.liveSeq+1 {
		return nil, decoy.Errorf(decoy.ECONFLICT, "Write %d does not follow live data %d", w.Seq, e.liveSeq)
	}
	ed, err := e.editor(w.Items)
	if err != nil {
		return nil, err
	}
	find := func(w *decoy.Write) (int, error) {
		view, _ := e.Records(splitPath(w.Items))
		i, ok := query.FindRecord(view, splitPath(w.Field), []byte(w.Key))
		if !ok {
			return 0, errNotFound()
		}
		return i, nil
	}
	if err := applyTo(ed, w, find, check); err != nil {
		return nil, err
	}
	return e.derive(ed.Document(), w.Seq, writeBytes(w)), nil
}

// Abandon releases e, an entry Apply made from prev that was never put in
// the cache (its write was not committed), and gives the room its record
// took in prev's arena back: prev's next write extends it in place rather
// than copying the whole data (see jsondoc.Document.Abandon).
func (e *Entry) Abandon(prev *Entry) {
	if e.Doc != nil && prev.Doc != nil {
		e.Doc.Abandon(prev.Doc)
	}
	e.Release()
}

// writeBytes is about what a write takes in a mock's log.
func writeBytes(w *decoy.Write) int64 {
	return int64(len(w.Record)+len(w.Key)+len(w.Items)+len(w.Field)) + 64
}

// LogBytes is about how many bytes of writes the mock's log holds past
// its base, as far as this entry knows: those it was made with since the
// base it was loaded from, less those a compaction put in a base since
// (MarkCompacted). A compaction another replica made is not known here.
func (e *Entry) LogBytes() int64 {
	if e.compacted == nil {
		return e.logBytes
	}
	return max(e.logBytes-e.compacted.Load(), 0)
}

// MarkCompacted records that a compaction wrote the entry's live data as
// its mock's base: the entries made from it count the bytes of writes
// from there.
func (e *Entry) MarkCompacted() {
	if e.compacted == nil {
		return // made with no write since its base: nothing to count
	}
	for {
		c := e.compacted.Load()
		if c >= e.logBytes || e.compacted.CompareAndSwap(c, e.logBytes) {
			return
		}
	}
}

// applyTo applies w to the collection ed edits, finding the record of a
// replace, an update or a delete with find, checking a record with check.
func applyTo(ed *jsondoc.Editor, w *decoy.Write, find func(*decoy.Write) (int, error), check func([]byte) ([]byte, error)) error {
	switch w.Op {
	case decoy.WriteCreate, decoy.WriteReplace, decoy.WriteUpdate, decoy.WriteDelete:
	default:
		return decoy.Errorf(decoy.EINVALID, "Unknown write operation: %q", w.Op)
	}
	var rec []byte
	if w.Op != decoy.WriteDelete {
		var err error
		if rec, err = check(w.Record); err != nil {
			return err
		}
	}
	if w.Op == decoy.WriteCreate {
		ed.Append(rec, true)
		return nil
	}
	i, err := find(w)
	if err != nil {
		return err
	}
	if w.Op == decoy.WriteDelete {
		ed.Delete(i)
	} else {
		ed.Replace(i, rec, true)
	}
	return nil
}

// compactSlack is how much more than twice its data an edited document's
// arena may hold (records replaced and deleted stay in it) before the data
// is parsed again into bytes of its own: once in so many writes, a pass
// over the document, and what is built over it built again when asked
// for. Tests lower it.
var compactSlack int64 = 1 << 20

// derive returns the entry of e's mock holding doc, live data number seq,
// made with wrote bytes of writes (see LogBytes), with one reference.
func (e *Entry) derive(doc *jsondoc.Document, seq, wrote int64) *Entry {
	if doc.Edited() && int64(len(doc.Bytes())) > 2*doc.Size()+compactSlack {
		if p, err := jsondoc.Parse(doc.Whole()); err == nil {
			doc = p
		}
	}
	body := docfile.FromBytes(doc.Bytes())
	if doc.Edited() && e.body.Mapped() && e.body.Acquire() {
		// doc was made by one change of e's document, whose bytes are
		// mapped: what is built over doc later reads them (its origin,
		// see jsondoc.Origin), so they stay mapped for as long as doc
		// is used, not only as long as e is (a PATCH, then an order_by
		// read once the cache had let e go, read unmapped memory: a
		// SIGSEGV that stopped the server).
		body = docfile.FromBytesOver(doc.Bytes(), e.body)
	}
	compacted := e.compacted
	if compacted == nil {
		compacted = new(atomic.Int64)
	}
	f := &Entry{body: body, Doc: doc, ContentType: e.ContentType, liveSeq: seq,
		edited: true, storedETag: e.storedETag, storedSize: e.storedSize,
		logBytes: e.logBytes + wrote, compacted: compacted}
	if doc.IsArray() {
		f.answers = newBuiltAnswers(int(doc.Size()))
	}
	stored := *e.Mock
	stored.ETag, stored.Size = e.storedETag, e.storedSize
	f.Mock = f.liveMock(&stored)
	f.unbounded()
	return f
}

// Changed reports whether the entry's data differs from its mock's current
// version: writes were applied to it, or it is a base a compaction wrote.
func (e *Entry) Changed() bool { return e.edited }
