package query

import (
	"bufio"
	"encoding/binary"
	"io"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy/jsondoc"
)

// A Result's answer is '[', the stored text of each selected record joined
// by ',', then ']': the records byte for byte as stored, never re-encoded.
// Over an item view (jsondoc.Document.Items) that array is spliced into the
// document's own bytes, every byte around it as stored; the answer of a
// query with One is the first selected record alone.

// Size returns the length of the answer in bytes.
func (r Result) Size() int {
	if r.one {
		if len(r.Records) == 0 {
			return 0
		}
		return r.doc.RecordLen(int(r.Records[0]))
	}
	size := 2 // '[' and ']'
	if len(r.Records) > 0 {
		size += len(r.Records) - 1 // the commas
	}
	for _, i := range r.Records {
		size += r.doc.RecordLen(int(i))
	}
	if before, after, ok := r.doc.Outer(); ok {
		size += len(before) + len(after)
	}
	return size
}

// Found reports whether a query with One found its record.
func (r Result) Found() bool { return len(r.Records) > 0 }

// ETag returns the strong entity tag of the answer. It costs a word per
// record rather than a pass over the bytes: it digests the sequence of the
// records' own digests, kept with the document, hashed in blocks (when
// they cannot be kept, each record is hashed now, to the same digest). The
// same records give the same answer and the same tag, whatever query
// selected them; a byte of a record changed changes its digest.
func (r Result) ETag() string {
	sums := r.doc.RecordSums()
	d := xxhash.New()
	var block [64 * 8]byte
	n := 0
	// What surrounds the records is digested first, so that the same
	// records alone, in an array, or spliced into their document have
	// different tags.
	switch {
	case r.one:
		block[0] = 1
		n = 8
	default:
		if sum, ok := r.doc.OuterSum(); ok {
			block[0] = 2
			binary.LittleEndian.PutUint64(block[8:], sum)
			n = 16
		}
	}
	for _, i := range r.Records {
		var sum uint64
		if sums != nil {
			sum = sums.At(int(i))
		} else {
			sum = xxhash.Sum64(r.doc.Record(int(i)))
		}
		binary.LittleEndian.PutUint64(block[n:], sum)
		if n += 8; n == len(block) {
			d.Write(block[:])
			n = 0
		}
	}
	d.Write(block[:n])
	return jsondoc.ETagOfDigest(d)
}

// WriteTo writes the answer to w, through a buffer: records are small, and
// a write each would cost a system call each.
func (r Result) WriteTo(w io.Writer) (int64, error) {
	bw := bufWriters.Get().(*bufio.Writer)
	bw.Reset(w)
	before, after, _ := r.doc.Outer()
	switch {
	case r.one:
		if len(r.Records) > 0 {
			bw.Write(r.doc.Record(int(r.Records[0])))
		}
	default:
		bw.Write(before)
		bw.WriteByte('[')
		for k, i := range r.Records {
			if k > 0 {
				bw.WriteByte(',')
			}
			bw.Write(r.doc.Record(int(i)))
		}
		bw.WriteByte(']')
		bw.Write(after)
	}
	err := bw.Flush()
	n := int64(r.Size())
	bw.Reset(nil)
	bufWriters.Put(bw)
	if err != nil {
		return 0, err
	}
	return n, nil
}

var bufWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}
