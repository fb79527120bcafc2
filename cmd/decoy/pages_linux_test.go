package main

import (
	"testing"
)

// Starting's pages of the binary go back: the resident pages mapped from
// files are fewer after (this test's binary, whose start and tests touched
// many).
func TestReleaseStartPages(t *testing.T) {
	before, after := releaseStartPages()
	if before == 0 && after == 0 {
		t.Skip("no MADV_PAGEOUT (Linux 5.4 and later) or no /proc")
	}
	if after >= before {
		t.Errorf("file-backed resident pages %d bytes before, %d after: none released", before, after)
	}
	t.Logf("file-backed resident pages: %d KiB, then %d KiB", before>>10, after>>10)
}
