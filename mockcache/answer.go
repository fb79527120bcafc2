package mockcache

import (
	"io"
	"strings"
	"sync"

	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/klauspost/compress/gzip"
)

// gzipMinSize is the smallest body worth compressing.
const gzipMinSize = 1024

// Answer is a read answer, worked out but not yet written: what its head
// says, and where its body comes from.
type Answer struct {
	Status int
	// ETag is set for 2xx answers: of the body as sent (gzipped or not).
	ETag string
	// Total is X-Total-Count: the records that passed the filters, or -1
	// when the data is not an array.
	Total int
	// NotModified is set when If-None-Match matched: answer 304.
	NotModified bool
	// Gzip is set when the body is sent gzipped.
	Gzip bool
	// Length is the length of the body as sent, or -1 when it is only
	// known once written (gzipped on the fly).
	Length int
	// NotFound is set when a query for one record (query.Query.One, an
	// item route) found none: answer 404, and nothing else of the answer
	// holds.
	NotFound bool

	e         *Entry
	processed bool         // built from the selected records, not the stored bytes
	res       query.Result // the selected records, when processed and not built
	built     *builtAnswer
	gz        []byte    // the gzipped body, when kept in memory
	gzFile    *fileBody // the gzipped body, when kept in a file
	// file is built's file when the answer sends it. It and gzFile are
	// acquired: Release gives them back.
	file *fileBody
}

// Answer runs the query (nil: none) and decides the answer for a client
// that accepts gzip or not and sent ifNoneMatch, writing nothing. key is
// the query string q was compiled from, under which its answer may be kept
// (see builtAnswers); "" keeps nothing (a query string with a token).
// The caller releases the answer (Release) once it is written, or not
// to be.
func (e *Entry) Answer(q *query.Query, key string, acceptsGzip bool, ifNoneMatch string) Answer {
	a := Answer{Status: e.Mock.Status, e: e, processed: q != nil && q.Processing(), Total: -1}
	size := int(e.Size())
	keep := a.processed && key != "" && e.answers != nil
	etag := e.Mock.ETag
	var items []string
	if q != nil {
		items = q.Items
	}
	if doc, ok := e.Records(items); ok {
		a.Total = doc.Len()
		if keep {
			if a.built = a.hold(e.answers.lookup(e.set, key)); a.built != nil {
				size, a.Total, etag = a.built.size, a.built.total, a.built.etag
				keep = false // kept already
			}
		}
		if a.processed && a.built == nil {
			a.res = q.Run(doc)
			a.Total = a.res.Total
			if q.One && !a.res.Found() {
				a.NotFound = true
				return a
			}
			size, etag = a.res.Size(), a.res.ETag()
		}
		if q != nil && q.One {
			a.Total = -1 // one record: not an array
		}
	} else {
		a.processed = false // not an array: the data unchanged (§1)
	}
	tag := etag // of the identity body
	if etag == "" {
		etag = jsondoc.ETag(e.Bytes())
	}
	a.Gzip = size >= gzipMinSize && acceptsGzip
	if a.Gzip {
		etag = strings.TrimSuffix(etag, `"`) + `-gzip"`
	}
	if a.Status >= 200 && a.Status < 300 {
		a.ETag = etag
		a.NotModified = a.Status == 200 && etagMatches(ifNoneMatch, etag)
	}
	if a.NotModified {
		a.Release() // no body is sent, nor its length
		return a
	}
	if keep {
		a.built = a.hold(e.answers.offer(e.set, key, size, a.Total, tag, e.spillDir, func(w io.Writer) { a.res.WriteTo(w) }))
	}
	switch {
	case !a.Gzip:
		a.Length = size
		return a
	case !a.processed:
		a.gz, a.gzFile = e.Gzip()
	case a.built != nil:
		a.gz, a.gzFile = e.answers.gzipped(e.set, key, e.spillDir, a.built)
	}
	if a.gzFile != nil && !a.gzFile.acquire() {
		a.gzFile = nil // dropped meanwhile: gzipped as it is written (the same bytes)
	}
	a.Length = len(a.gz)
	if a.gzFile != nil {
		a.Length = int(a.gzFile.size)
	} else if a.gz == nil {
		// Gzipped on the fly, as it is written: sent without
		// Content-Length.
		a.Length = -1
	}
	return a
}

// hold returns ba, the kept answer the answer is sent from, with its file
// acquired if it has one; nil when it has none, or its file was dropped
// meanwhile (the answer is then made from the records).
func (a *Answer) hold(ba *builtAnswer) *builtAnswer {
	if ba == nil || ba.file == nil {
		return ba
	}
	if !ba.file.acquire() {
		return nil
	}
	a.file = ba.file
	return ba
}

// Release gives back the files the answer was to be sent from, once it is
// written or will not be: a file its cache dropped meanwhile is removed
// then. An Answer is a value: release it once, on one of its copies.
func (a *Answer) Release() {
	if a.file != nil {
		a.file.release()
		a.file = nil
	}
	if a.gzFile != nil {
		a.gzFile.release()
		a.gzFile = nil
	}
}

// Bytes returns the answer's body when it is held whole in memory (the
// stored bytes, a kept answer, or their gzipped copies), and nil when it is
// made as it is written or sent from a file. The bytes never change: they may be sent after
// the call that wrote them returned (see transport.Gather).
func (a *Answer) Bytes() []byte {
	switch {
	case a.Gzip:
		return a.gz
	case !a.processed:
		return a.e.Bytes()
	case a.built != nil:
		return a.built.body
	}
	return nil
}

// WriteBody writes the answer's body to w.
func (a *Answer) WriteBody(w io.Writer) {
	switch b := a.Bytes(); {
	case b != nil:
		_, _ = w.Write(b)
	case a.gzFile != nil:
		a.gzFile.writeTo(w)
	case a.Gzip && !a.processed:
		a.e.writeGzip(w)
	case a.Gzip && a.built != nil:
		gzipTo(w, a.built.writeTo)
	case a.built != nil:
		a.built.writeTo(w) // kept in a file
	case a.Gzip:
		gzipTo(w, func(zw io.Writer) { a.res.WriteTo(zw) })
	default:
		a.res.WriteTo(w)
	}
}

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// gzipTo writes to w, gzipped at BestSpeed by a pooled writer, what write
// writes: how an answer made for one request is compressed.
func gzipTo(w io.Writer, write func(io.Writer)) {
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(w)
	write(zw)
	zw.Close()
	zw.Reset(nil) // drop the reference to w before pooling
	gzipWriters.Put(zw)
}

// etagMatches reports whether an If-None-Match header matches etag (weak
// comparison, as RFC 9110 wants for If-None-Match).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
