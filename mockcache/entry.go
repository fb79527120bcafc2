package mockcache

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/klauspost/compress/gzip"
)

// Entry is a mock ready to serve: its settings and its data, parsed once.
// Its data may be mapped from a file (see docfile): Data, Doc and what
// they give (records, answers) must not be used once the reference that
// Get gave is released. Entries with the same data (new settings) share
// one document, and its references.
type Entry struct {
	Mock *decoy.Mock
	// Data is the stored document.
	Data []byte
	// ContentType is Mock.ContentType as a header value, made once.
	ContentType []string
	// Doc is the parsed data when the content type is JSON, else nil.
	Doc *jsondoc.Document

	body *docfile.Doc
	// built keeps large answers of queries over Doc, when Doc is an array.
	built *builtAnswers

	gzipOnce  sync.Once
	gzipped   []byte
	gzipBytes atomic.Int64 // len(gzipped), once made
	// oneAnswer is set on an entry made for one answer (see
	// NewAnswerEntry).
	oneAnswer bool

	// checked is when the entry was last known to match the store (Unix
	// nanoseconds), for replicas that share the store.
	checked atomic.Int64
	// used is the cache's epoch when the entry was last read (see
	// Cache.enforceLocked).
	used atomic.Int64
	// onGrow is told when the entry grows (its gzipped copy, the answers
	// built keeps).
	onGrow atomic.Pointer[func(int64)]
	// onRelease is told when a read of the entry ends: what the read
	// built over it is then counted against the cache's bound.
	onRelease atomic.Pointer[func(*Entry)]
}

// entryOverhead is about what an entry holds besides its data, the strings
// of its settings and what is built over it: the entry, its mock, the
// parsed document's fixed part, its kept answers' and the cache's map
// slots. Counted, --max-cache-bytes bounds many small mocks too: measured,
// each cached mock of 1 KiB held in memory added 1.8 KiB to the live heap.
const entryOverhead = 640

// Footprint is about how much memory the entry holds: its document, what
// was built over it, its gzipped copy, and the fixed cost of an entry.
func (e *Entry) Footprint() int64 {
	n := e.body.MemoryBytes() + e.gzipBytes.Load() + entryOverhead +
		int64(len(e.Mock.ID)+len(e.Mock.Name)+len(e.Mock.ETag)+len(e.Mock.ContentType)+len(e.Mock.TokenHash))
	if e.Doc != nil {
		n += e.Doc.MemoryBytes()
	}
	if e.built != nil {
		n += e.built.footprint()
	}
	return n
}

// NewEntry returns the entry of mock m with the document body, parsed when
// the content type is JSON. A JSON type with data that does not parse is an
// EINVALID error naming the line and column.
func NewEntry(m *decoy.Mock, body *docfile.Doc) (*Entry, error) {
	data := body.Bytes()
	e := &Entry{Mock: m, body: body, Data: data, ContentType: []string{m.ContentType}}
	if IsJSON(m.ContentType) {
		if !utf8.Valid(data) {
			// JSON is UTF-8 (RFC 8259); other bytes would reach clients
			// that cannot decode them.
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: not valid UTF-8")
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
			e.built = newBuiltAnswers(len(data))
		}
	}
	return e, nil
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

// WithMock returns a copy of e with new settings and the same data.
func (e *Entry) WithMock(m *decoy.Mock) *Entry {
	ne := &Entry{Mock: m, body: e.body, Data: e.Data, Doc: e.Doc, built: e.built, ContentType: []string{m.ContentType}}
	ne.used.Store(e.used.Load())
	ne.onGrow.Store(e.onGrow.Load())
	ne.onRelease.Store(e.onRelease.Load())
	return ne
}

// sameMock reports whether m is the stored version of the mock e holds: the
// same version of the same mock, not of one deleted and created again under
// its id (versions start again at 1).
func (e *Entry) sameMock(m *decoy.Mock) bool {
	return m.Version == e.Mock.Version && m.CreatedAt.Equal(e.Mock.CreatedAt)
}

// sameData reports whether m describes the data e holds.
func (e *Entry) sameData(m *decoy.Mock) bool {
	return m.ETag == e.Mock.ETag && m.ContentType == e.Mock.ContentType && m.Size == int64(len(e.Data)) &&
		m.CreatedAt.Equal(e.Mock.CreatedAt)
}

// Release gives back the reference to the entry's document that Get gave
// (or that the document was made with): once the last is released a mapped
// document is unmapped, and its data must not be used any more. If what the
// read built (columns, indexes, kept answers, a gzipped copy) took the
// cache past its bound, the least recently read entries leave now, not at
// the next read.
func (e *Entry) Release() {
	if f := e.onRelease.Load(); f != nil {
		(*f)(e)
	}
	e.body.Release()
}

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

// Gzip returns the stored data gzipped, computing it once.
func (e *Entry) Gzip() []byte {
	e.gzipOnce.Do(func() {
		var b bytes.Buffer
		if e.oneAnswer {
			b.Grow(len(e.Data)/4 + 64)
			gzipTo(&b, func(zw io.Writer) { zw.Write(e.Data) })
		} else {
			zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
			zw.Write(e.Data)
			zw.Close()
		}
		e.gzipped = b.Bytes()
		e.gzipBytes.Store(int64(len(e.gzipped)))
		e.grew(int64(len(e.gzipped)))
	})
	return e.gzipped
}

// grew tells the cache, if it counts, that the entry grew by n bytes.
func (e *Entry) grew(n int64) {
	if f := e.onGrow.Load(); f != nil {
		(*f)(n)
	}
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
