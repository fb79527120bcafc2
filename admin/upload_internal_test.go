package admin

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/decoy-mock/decoy"
)

// fullFile is an upload file on a disk that fills after room bytes: it
// writes what fits, then fails with err, as write(2) does.
type fullFile struct {
	room int
	err  error
	got  bytes.Buffer
}

func (f *fullFile) Write(p []byte) (int, error) {
	if len(p) <= f.room {
		f.room -= len(p)
		return f.got.Write(p)
	}
	n, _ := f.got.Write(p[:f.room])
	f.room = 0
	return n, &os.PathError{Op: "write", Path: "/data/tmp/upload-1", Err: f.err}
}

type brokenBody struct{}

func (brokenBody) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

// An upload that fails answers for the side that failed: the client's body
// (400, 413) or the server's file (507 when its disk is full, else 500).
// io.Copy alone told them apart by neither: a full disk answered 400
// "Could not read the request body".
func TestReceiveTellsWhichSideFailed(t *testing.T) {
	tooLarge := decoy.Errorf(decoy.ETOOLARGE, "too large")
	body := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		name string
		body io.Reader
		file io.Writer
		code string
		msg  string
	}{
		{"all well", strings.NewReader(body), &fullFile{room: len(body)}, "", ""},
		{"the body breaks", io.MultiReader(strings.NewReader("[1,"), brokenBody{}), &fullFile{room: len(body)}, decoy.EINVALID, "Could not read the request body"},
		{"the body is over the cap", http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(body)), 10<<10), &fullFile{room: len(body)}, decoy.ETOOLARGE, "too large"},
		{"the disk is full", strings.NewReader(body), &fullFile{room: 40 << 10, err: syscall.ENOSPC}, decoy.ENOSPACE, errUploadSpace.Message},
		{"the disk is full from the start", strings.NewReader(body), &fullFile{err: syscall.ENOSPC}, decoy.ENOSPACE, errUploadSpace.Message},
		{"the disk fails", strings.NewReader(body), &fullFile{room: 40 << 10, err: syscall.EIO}, decoy.EINTERNAL, "Internal server error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := receive(tc.file, tc.body, tooLarge)
			if code := decoy.ErrorCode(err); code != tc.code || decoy.ErrorMessage(err) != tc.msg {
				t.Errorf("got %q %q (%v), want %q %q", code, decoy.ErrorMessage(err), err, tc.code, tc.msg)
			}
			if tc.code == decoy.ENOSPACE || tc.code == decoy.EINTERNAL {
				// The log says which file and why.
				if !strings.Contains(err.Error(), "/data/tmp/upload-1") {
					t.Errorf("the cause is not in the chain: %v", err)
				}
			}
		})
	}
}
