package server

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	const block = 1 << 20
	for _, size := range []int{0, 1, block - 1, block, block + 1, 3*block + block/2} {
		in := bytes.Repeat([]byte("x"), size)
		// Unknown length (chunked): read in blocks.
		got, err := readBody(bytes.NewReader(in), -1)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%d bytes, unknown length: %d bytes, %v", size, len(got), err)
		}
		if size > 0 {
			got, err = readBody(bytes.NewReader(in), int64(size))
			if err != nil || !bytes.Equal(got, in) {
				t.Errorf("%d bytes, known length: %d bytes, %v", size, len(got), err)
			}
		}
	}
	if _, err := readBody(strings.NewReader("abc"), 5); err == nil {
		t.Error("a body shorter than its length was taken")
	}
	if _, err := readBody(strings.NewReader("abcdef"), 5); err == nil {
		t.Error("a body longer than its length was taken")
	}
}
