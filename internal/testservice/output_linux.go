package testservice

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// goCommandOutput opens the standard output of the go command that runs
// this test binary, or returns nil: when the parent process is not the go
// command (go test -exec, a binary run by hand), or when its output is a
// regular file it does not append to, where a write of ours would be
// overwritten by its next line. A pipe (a CI log), a terminal and a file
// opened to append take the line.
func goCommandOutput() io.WriteCloser {
	proc := "/proc/" + strconv.Itoa(os.Getppid())
	exe, err := os.Readlink(proc + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return nil
	}
	fi, err := os.Stat(proc + "/fd/1")
	if err != nil {
		return nil
	}
	if fi.Mode().IsRegular() && !appending(proc+"/fdinfo/1") {
		return nil
	}
	f, err := os.OpenFile(proc+"/fd/1", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	return f
}

// appending reports whether the file descriptor an fdinfo file describes
// was opened with O_APPEND (02000 in its octal flags).
func appending(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			var flags int
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%o", &flags); err != nil {
				return false
			}
			return flags&0o2000 != 0
		}
	}
	return false
}
