package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"

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
func (s *Server) readData(w http.ResponseWriter, r *http.Request) (*upload, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid Content-Type %q", ct)
	}
	max := s.cfg.MaxDataBytes
	tooLarge := decoy.Errorf(decoy.ETOOLARGE, "Mock data larger than %d bytes (--max-data-bytes)", max)
	if r.ContentLength > max {
		return nil, tooLarge
	}
	f, err := os.CreateTemp(s.cfg.UploadDir, "upload-*")
	if err != nil {
		return nil, decoy.Errorf(decoy.EINTERNAL, "create upload file: %v", err)
	}
	u := &upload{contentType: ct, file: f}
	_, err = io.Copy(f, http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		u.discard()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	}
	if u.doc, err = docfile.Load(f); err != nil {
		u.discard()
		return nil, decoy.Errorf(decoy.EINTERNAL, "map upload: %v", err)
	}
	return u, nil
}
