package admin

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"syscall"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
)

// upload is a mock document sent to the admin API: streamed into a file of
// the upload folder as it arrives, never held whole in the Go heap unless
// small, then read or mapped (see docfile.Load). The store may take the
// file over (see decoy.Data); discard closes it, removes what is left of
// it, and gives back the upload's reference to the document.
type upload struct {
	contentType string
	doc         *docfile.Doc
	file        *os.File
}

// data is the upload as a store takes it.
func (u *upload) data() decoy.Data {
	return decoy.Data{Bytes: u.doc.Bytes(), File: u.file}
}

// discard closes and removes the upload's file, unless a store moved it
// away, and releases the upload's document: an entry made from it keeps
// its own reference.
func (u *upload) discard() {
	u.file.Close()
	_ = os.Remove(u.file.Name())
	if u.doc != nil {
		u.doc.Release()
	}
}

// readData streams a mock document from the request body, up to
// MaxDataBytes, into the upload folder, with its content type
// (application/json when none is given).
func (s *API) readData(w http.ResponseWriter, r *http.Request) (*upload, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid Content-Type %q", ct)
	}
	max := s.cfg.MaxDataBytes
	tooLarge := errTooLarge(max)
	if r.ContentLength > max {
		return nil, tooLarge
	}
	f, err := os.CreateTemp(s.cfg.UploadDir, "upload-*")
	if err != nil {
		return nil, uploadFileError("create", err)
	}
	u := &upload{contentType: ct, file: f}
	if err := receive(f, http.MaxBytesReader(w, r.Body, max), tooLarge); err != nil {
		u.discard()
		return nil, err
	}
	if u.doc, err = docfile.Load(f); err != nil {
		u.discard()
		return nil, decoy.Errorf(decoy.EINTERNAL, "map upload: %v", err)
	}
	return u, nil
}

// errTooLarge is the answer to data larger than max, MaxDataBytes.
func errTooLarge(max int64) error {
	return decoy.Errorf(decoy.ETOOLARGE, "Mock data larger than %d bytes (--max-data-bytes)", max)
}

// receive copies a request body into the upload's file. io.Copy does not
// say which side failed, and the answer depends on it: a body that could
// not be read is the client's doing (400, or tooLarge past the cap), a file
// that could not be written is the server's (507 when its disk is full,
// else 500).
func receive(file io.Writer, body io.Reader, tooLarge error) error {
	fw := &failedWrite{w: file}
	_, err := io.Copy(fw, body)
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case fw.err != nil:
		return uploadFileError("write", fw.err)
	case errors.As(err, &mbe):
		return tooLarge
	}
	return decoy.Errorf(decoy.EINVALID, "Could not read the request body")
}

// failedWrite is a writer that remembers its error.
type failedWrite struct {
	w   io.Writer
	err error
}

func (fw *failedWrite) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	if err != nil {
		fw.err = err
	}
	return n, err
}

// errUploadSpace is the answer to an upload the disk has no room for.
var errUploadSpace = decoy.Errorf(decoy.ENOSPACE, "Not enough disk space to receive this upload: the file system of the server's upload folder is full")

// uploadFileError is the error of an upload's file that could not be
// created or written: ENOSPACE when the disk is full, else internal. The
// cause stays in the chain, for the log.
func uploadFileError(op string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (%s upload file: %w)", errUploadSpace, op, err)
	}
	return fmt.Errorf("%s upload file: %w", op, err)
}
