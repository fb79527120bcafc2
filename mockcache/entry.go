package mockcache

import (
	"errors"
	"io"
	"mime"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/klauspost/compress/gzip"
)

// Entry is a mock ready to serve: its settings and its data, parsed once.
// Its data may be mapped from a file (see docfile): Bytes, Doc and what
// they give (records, answers) must not be used once the reference that
// Get gave is released. Entries with the same data (new settings) share
// one document, and its references, and what is kept over it.
type Entry struct {
	// Mock is the mock's settings, and a description of the data the
	// entry holds: with writes (§12), its live data's (Size, ETag,
	// LiveSeq; see Live).
	Mock *decoy.Mock
	// data is the stored document (see Bytes, which gives the live
	// data).
	data []byte
	// ContentType is Mock.ContentType as a header value, made once.
	ContentType []string
	// Doc is the parsed data when the content type is JSON, else nil.
	Doc *jsondoc.Document

	body *docfile.Doc
	// set keeps what is built over the data, counted against the
	// cache's bound (budget.Unbounded until the cache admits the entry):
	// Doc's structures, the gzipped copy, kept answers.
	set *budget.Set
	// answers decides which answers of queries over Doc are kept, when
	// Doc is an array.
	answers *builtAnswers
	// oneAnswer is set on an entry made for one answer (see
	// NewAnswerEntry).
	oneAnswer bool
	// spillDir is the folder of the cache's large kept bodies (see
	// spillMin), empty to keep them in memory.
	spillDir string

	// checked is when the entry was last known to match the store (Unix
	// nanoseconds), for replicas that share the store.
	checked atomic.Int64

	// liveSeq is the number of the live data the entry holds (see
	// decoy.LiveStore); edited is set when that is not the current
	// version's data as stored (writes, or a base a compaction wrote).
	liveSeq int64
	edited  bool
	// storedETag and storedSize describe the current version's data, as
	// the store describes it (Mock describes the live data), for the
	// checks against the store.
	storedETag string
	storedSize int64

	// logBytes is about how many bytes of writes the entry's live data
	// was made with since the base it was loaded from (see LogBytes);
	// compacted, shared by the entries made one from another, is how
	// many of them a compaction has put in a base since.
	logBytes  int64
	compacted *atomic.Int64
}

// entryOverhead is about what an entry holds besides its data, the strings
// of its settings and what is built over it: the entry, its mock, the
// parsed document's fixed part, its registry and the cache's map slots.
// Counted, --max-cache-bytes bounds many small mocks too: measured, each
// cached mock of 1 KiB held in memory added 1.8 KiB to the live heap.
const entryOverhead = 640

// base is the memory the entry holds before anything is built over it:
// its document, its record spans, the strings of its settings and the
// fixed cost of an entry.
func (e *Entry) base() int64 {
	n := e.body.MemoryBytes() + entryOverhead + e.mockBytes()
	if e.Doc != nil {
		n += e.Doc.MemoryBytes()
	}
	return n
}

// mockBytes is what the strings of the entry's settings hold.
func (e *Entry) mockBytes() int64 {
	m := e.Mock
	return int64(len(m.ID) + len(m.Name) + len(m.ETag) + len(m.ContentType) + len(m.TokenHash))
}

// Footprint is about how much memory the entry holds: its document, what
// was built over it (columns, indexes, sort orders, record digests, kept
// answers, its gzipped copy), and the fixed cost of an entry.
func (e *Entry) Footprint() int64 { return e.set.Bytes() }

// attach has what is built over the entry's data kept in set.
func (e *Entry) attach(set *budget.Set) {
	e.set = set
	if e.Doc != nil {
		e.Doc.SetStructures(set)
	}
}

// NewEntry returns the entry of mock m with the document body, parsed when
// the content type is JSON. A JSON type with data that does not parse is an
// EINVALID error naming the line and column.
func NewEntry(m *decoy.Mock, body *docfile.Doc) (*Entry, error) {
	data := body.Bytes()
	e := &Entry{Mock: m, body: body, data: data, ContentType: []string{m.ContentType}, liveSeq: m.LiveSeq,
		storedETag: m.ETag, storedSize: int64(len(data))}
	if IsJSON(m.ContentType) {
		if !utf8.Valid(data) {
			// JSON is UTF-8 (RFC 8259); other bytes would reach clients
			// that cannot decode them.
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: not valid UTF-8 (%s)", decoy.BadUTF8At(data))
		}
		doc, err := jsondoc.Parse(data)
		var se *jsondoc.SyntaxError
		switch {
		case errors.As(err, &se) && se.TooDeep:
			return nil, decoy.Errorf(decoy.EINVALID, "JSON nested too deeply: Decoy accepts at most %d levels of arrays and objects (line %d, column %d)", jsondoc.MaxDepth, se.Line, se.Column)
		case err != nil:
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: %v", err)
		}
		e.Doc = doc
		if doc.IsArray() {
			e.answers = newBuiltAnswers(len(data))
		}
	}
	e.unbounded()
	return e, nil
}

// unbounded has the entry keep what is built over it in a set of its own,
// with no bound: until a cache admits it, or for its one answer.
func (e *Entry) unbounded() {
	set := budget.Unbounded()
	set.GrowBase(e.base())
	e.attach(set)
}

// NewAnswerEntry returns an entry made for one answer, of data generated
// for it: never cached, it is served as any entry, but its gzipped copy,
// made for that one answer, is made as answers built per request are
// (BestSpeed, with a pooled writer) rather than as a stored document's,
// which is made once and sent many times.
func NewAnswerEntry(m *decoy.Mock, body *docfile.Doc) (*Entry, error) {
	e, err := NewEntry(m, body)
	if err == nil {
		e.oneAnswer = true
	}
	return e, err
}

// WithMock returns a copy of e with new settings and the same data (and
// what is kept over it).
func (e *Entry) WithMock(m *decoy.Mock) *Entry {
	f := &Entry{Mock: m, body: e.body, data: e.data, Doc: e.Doc, set: e.set, answers: e.answers,
		oneAnswer: e.oneAnswer, spillDir: e.spillDir, ContentType: []string{m.ContentType}, liveSeq: e.liveSeq, edited: e.edited,
		storedETag: m.ETag, storedSize: e.storedSize, logBytes: e.logBytes, compacted: e.compacted}
	f.Mock = f.liveMock(m)
	return f
}

// sameMock reports whether m is the stored version of the mock e holds: the
// same version of the same mock, not of one deleted and created again under
// its id (versions start again at 1).
func (e *Entry) sameMock(m *decoy.Mock) bool {
	return m.Version == e.Mock.Version && m.CreatedAt.Equal(e.Mock.CreatedAt)
}

// sameData reports whether m describes the data e holds.
func (e *Entry) sameData(m *decoy.Mock) bool {
	return m.ETag == e.storedETag && m.ContentType == e.Mock.ContentType && m.Size == e.storedSize &&
		m.CreatedAt.Equal(e.Mock.CreatedAt)
}

// Release gives back the reference to the entry's document that Get gave
// (or that the document was made with): once the last is released a mapped
// document is unmapped, and its data must not be used any more.
func (e *Entry) Release() { e.body.Release() }

// IsArray reports whether query parameters apply to the data.
func (e *Entry) IsArray() bool { return e.Doc != nil && e.Doc.IsArray() }

// Records returns the array that queries with Items run over (see
// jsondoc.Document.Items; nil: the data itself), and whether the data
// holds one there.
func (e *Entry) Records(items []string) (*jsondoc.Document, bool) {
	if e.Doc == nil {
		return nil, false
	}
	return e.Doc.Items(items)
}

// gzipKey names the gzipped copy of the stored data among what is kept
// over it.
var gzipKey = budget.Key{Kind: "gzip"}

// gzipCopy is the gzipped copy of the stored data: in memory, or in a
// file (see spill).
type gzipCopy struct {
	bytes []byte
	file  *fileBody
}

// Drop lets go of the copy's file, if it has one, when its set keeps it
// no more (budget.Dropper).
func (g gzipCopy) Drop() {
	if g.file != nil {
		g.file.Drop()
	}
}

// Gzip returns the stored data gzipped, made once and kept with the entry:
// in memory, or in a file of the spill folder when it is spillMin or more
// and the entry has one. Both are nil when it cannot be kept (the caller
// gzips as it writes: see writeGzip, which makes the same bytes).
func (e *Entry) Gzip() ([]byte, *fileBody) {
	gz, _ := e.set.Load(gzipKey, func(b *budget.Build) any {
		if e.spillDir != "" && !e.oneAnswer && e.Size() >= spillMin {
			if fb := spill(e.spillDir, e.writeGzip, b.Reserve, b.Free); fb != nil {
				return fb.keep()
			}
		}
		w := growingBuffer{reserve: b.Reserve, free: b.Free}
		e.writeGzip(&w)
		if w.failed || !w.trim() {
			return nil
		}
		return gzipCopy{bytes: w.buf}
	}).(gzipCopy)
	return gz.bytes, gz.file
}

// writeGzip writes the stored data gzipped to w: as a stored document's
// copy is made, once and sent many times (DefaultCompression), or as an
// answer's, for an entry made for one answer.
func (e *Entry) writeGzip(w io.Writer) {
	if e.oneAnswer {
		gzipTo(w, func(zw io.Writer) { zw.Write(e.Bytes()) })
		return
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	zw.Write(e.Bytes())
	zw.Close()
}

// growingBuffer is a buffer that reserves memory before it grows, and
// stops (failed) when a reservation does not fit.
type growingBuffer struct {
	buf     []byte
	reserve func(int64) bool
	free    func(int64)
	failed  bool
}

// errNoRoom is what a growingBuffer's writes fail with once it could not
// grow.
var errNoRoom = errors.New("mockcache: no room within the cache's bound")

func (g *growingBuffer) Write(p []byte) (int, error) {
	if g.failed {
		return 0, errNoRoom
	}
	if need := len(g.buf) + len(p); need > cap(g.buf) {
		old := cap(g.buf)
		size := max(2*old, need, 4<<10)
		if !g.reserve(int64(size)) {
			g.failed = true
			return 0, errNoRoom
		}
		g.buf = append(make([]byte, 0, size), g.buf...)
		g.free(int64(old))
	}
	g.buf = append(g.buf, p...)
	return len(p), nil
}

// trim gives back the room left past the end of the buffer, copying it
// when that room is more than an eighth of it.
func (g *growingBuffer) trim() bool {
	if c := cap(g.buf); c-len(g.buf) > c/8 {
		if !g.reserve(int64(len(g.buf))) {
			return false
		}
		g.buf = append(make([]byte, 0, len(g.buf)), g.buf...)
		g.free(int64(c))
	}
	return true
}

// IsJSON reports whether a media type is JSON: application/json or a +json
// type.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// DocOf returns data from a store as a document, with one reference: a
// file is read or mapped (see docfile.Load) and closed, bytes are kept as
// they are.
func DocOf(d decoy.Data) (*docfile.Doc, error) {
	if d.File == nil {
		return docfile.FromBytes(d.Bytes), nil
	}
	// Closed at once: a mapping does not need its file, and an open file
	// per cached mock would run into the process's limit on descriptors.
	defer d.File.Close()
	return docfile.Load(d.File)
}
