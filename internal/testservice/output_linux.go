package testservice

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goCommandOutput opens the standard output of the go command that runs
// this test binary, or returns nil: when the parent process is not the go
// command (go test -exec, a binary run by hand), or when its output is a
// regular file it does not append to, where a write of ours would be
// overwritten by its next line. A pipe (a CI log), a terminal and a file
// opened to append take the line.
func goCommandOutput() io.WriteCloser {
	g, ok := parentGo()
	if !ok {
		return nil
	}
	proc := "/proc/" + strconv.Itoa(g.pid)
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

// parentGo returns the go command that runs this test binary: false when
// the parent process is not the go command (go test -exec, a binary run
// by hand).
func parentGo() (goCommand, bool) {
	g := goCommand{pid: os.Getppid()}
	proc := "/proc/" + strconv.Itoa(g.pid)
	exe, err := os.Readlink(proc + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return g, false
	}
	var ok bool
	if g.started, ok = startTime(g.pid); !ok {
		return g, false
	}
	if g.dir, err = os.Readlink(proc + "/cwd"); err != nil {
		return g, false
	}
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return g, false
	}
	g.args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	return g, true
}

// statFields are the fields of /proc/pid/stat after the command's name
// (which may hold spaces), from the third (state) on.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// startTime is the 22nd field of a process's stat: when it started.
func startTime(pid int) (string, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 20 {
		return "", false
	}
	return f[19], true
}

// running reports whether the process pid that started at started runs.
func running(pid int, started string) bool {
	s, ok := startTime(pid)
	return ok && s == started
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	want := strconv.Itoa(pid)
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := statFields(n); ok && len(f) > 1 && f[1] == want {
			kids = append(kids, n)
		}
	}
	return kids
}

// settle waits for the go command, its last other test binary ended, to
// print the results it was holding: until it has written nothing for 60
// ms (its count of bytes written, in /proc/pid/io, unchanged), at most 2
// s; without that count, 200 ms.
func settle(pid int) {
	last, ok := written(pid)
	if !ok {
		time.Sleep(200 * time.Millisecond)
		return
	}
	for quiet, tries := 0, 0; quiet < 3 && tries < 100; tries++ {
		time.Sleep(20 * time.Millisecond)
		n, _ := written(pid)
		if n == last {
			quiet++
		} else {
			quiet, last = 0, n
		}
	}
}

// written is the count of bytes the process pid has written (wchar).
func written(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar:"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
