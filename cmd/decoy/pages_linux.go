package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseStartPages gives back the pages of the binary's code and tables
// that starting touched, once the server is up: its flags, its commands,
// the stores' migrations and seeding, which serving never runs again. The
// kernel maps a file's pages around each one touched (64 KiB at a time),
// so they were half the binary's resident pages, a third of a server's
// memory holding 25 MiB of documents (bench/: 24.5 MiB of 77.5). Pages
// serving needs come back at their first use, from the page cache or the
// file. It returns the bytes of the binary's resident pages before and
// after; 0, 0 when the kernel (before Linux 5.4) has no MADV_PAGEOUT or
// /proc is not there.
func releaseStartPages() (before, after int64) {
	exe, err := os.Executable()
	if err != nil {
		return 0, 0
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, 0
	}
	before = fileRSS()
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue // another file's, or written to: not the file's pages
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT); errno != 0 {
			return 0, 0
		}
	}
	return before, fileRSS()
}

// fileRSS is the process's resident pages mapped from files (RssFile of
// /proc/self/status), in bytes; 0 when it cannot be read.
func fileRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
