package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressThreshold is the size from which an upload shows its progress.
const progressThreshold = 1 << 20

// uploadProgress returns f, read through a progress bar drawn on w when w
// is a terminal and f holds more than 1 MiB; else f as it is. Closing it
// closes f and leaves the bar at its end, on its own line.
func uploadProgress(w io.Writer, f *os.File, what string) io.ReadCloser {
	if !isTerminal(w) {
		return f
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= progressThreshold {
		return f
	}
	bar := progressbar.NewOptions64(fi.Size(),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionShowCount(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	r := progressbar.NewReader(f, bar)
	return &progressFile{Reader: &r, f: f, bar: bar}
}

// progressFile is a file read through a progress bar.
type progressFile struct {
	io.Reader
	f   *os.File
	bar *progressbar.ProgressBar
}

func (p *progressFile) Close() error {
	p.bar.Finish()
	return p.f.Close()
}
