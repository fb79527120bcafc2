package redis

import (
	"bytes"
	"testing"
)

// The buffer a batch's JSON is written in is kept for the next batch,
// up to maxKeptBuffer; past it, and for a batch written while another
// is, a buffer of its own is made and not kept.
func TestJournalBuffer(t *testing.T) {
	j := &Journal{}
	first, release := j.buffer()
	first = append(first, "first batch"...)
	release(first)
	again, release := j.buffer()
	if len(again) != 0 || &again[:1][0] != &first[0] {
		t.Fatalf("the next batch got a new buffer, or a full one (%q)", again)
	}

	// While it is in use, another batch gets one of its own, whose
	// release neither keeps it nor frees the kept one.
	other, releaseOther := j.buffer()
	if &other[:1][0] == &again[:1][0] {
		t.Fatal("two batches at once share a buffer")
	}
	releaseOther(append(other, 'x'))
	if !bytes.Equal(j.buf[:len("first batch")], []byte("first batch")) {
		t.Fatal("the other batch's release changed the kept buffer")
	}

	// A batch that grew the buffer past the bound: not kept.
	big := append(again, make([]byte, maxKeptBuffer+1)...)
	release(big)
	if j.buf != nil {
		t.Fatalf("a buffer of %d bytes kept, past the bound of %d", cap(j.buf), maxKeptBuffer)
	}
	// At the bound: kept.
	_, release = j.buffer()
	release(make([]byte, 0, maxKeptBuffer))
	if cap(j.buf) != maxKeptBuffer {
		t.Fatalf("a buffer at the bound (%d) not kept: %d", maxKeptBuffer, cap(j.buf))
	}
}
