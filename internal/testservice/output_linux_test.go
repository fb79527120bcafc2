package testservice

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestAppending: a file opened to append is told from one opened to
// write at its offset, which the go command's output may be.
func TestAppending(t *testing.T) {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("no /proc")
	}
	name := filepath.Join(t.TempDir(), "log")
	for _, tc := range []struct {
		flag int
		want bool
	}{{os.O_WRONLY | os.O_CREATE, false}, {os.O_WRONLY | os.O_CREATE | os.O_APPEND, true}} {
		f, err := os.OpenFile(name, tc.flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if got := appending(fmt.Sprintf("/proc/self/fdinfo/%d", f.Fd())); got != tc.want {
			t.Errorf("flags %o: appending %v, want %v", tc.flag, got, tc.want)
		}
		f.Close()
	}
}
