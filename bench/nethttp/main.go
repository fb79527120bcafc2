// Command nethttp is the benchmark's second floor: it serves the files nginx
// serves (Decoy's answers, written under one folder) with Go's net/http and
// nothing else, so that a run shows what net/http itself costs to send
// Decoy's bytes, next to what nginx costs.
//
// Like nginx's gzip_static, a client that accepts gzip gets NAME.gz when it
// exists, with Content-Encoding: gzip. A file is read once, at its first
// request, and kept: the bytes are then sent from memory, as Decoy sends a
// kept answer.
//
//	nethttp -addr 127.0.0.1:8081 -root www
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	root := flag.String("root", ".", "folder of the files served")
	flag.Parse()
	if err := http.ListenAndServe(*addr, newFiles(os.DirFS(*root))); err != nil {
		fmt.Fprintln(os.Stderr, "nethttp:", err)
		os.Exit(1)
	}
}

// files answers GET and HEAD with the file the path names, read once.
type files struct {
	fsys fs.FS
	kept sync.Map // name → *file
}

// file is a file's bytes and its Content-Length header value.
type file struct {
	body   []byte
	length []string
}

func newFiles(fsys fs.FS) *files { return &files{fsys: fsys} }

var (
	valJSON = []string{"application/json"}
	valGzip = []string{"gzip"}
)

func (f *files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	h := w.Header()
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		if gz, err := f.get(name + ".gz"); err == nil {
			h["Content-Encoding"] = valGzip
			f.send(w, r, gz)
			return
		}
	}
	plain, err := f.get(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid):
		http.NotFound(w, r)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		f.send(w, r, plain)
	}
}

func (f *files) send(w http.ResponseWriter, r *http.Request, x *file) {
	h := w.Header()
	h["Content-Type"] = valJSON
	h["Content-Length"] = x.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(x.body)
	}
}

// get returns the named file, reading it at its first request.
func (f *files) get(name string) (*file, error) {
	if x, ok := f.kept.Load(name); ok {
		return x.(*file), nil
	}
	b, err := fs.ReadFile(f.fsys, name)
	if err != nil {
		return nil, err
	}
	x, _ := f.kept.LoadOrStore(name, &file{body: b, length: []string{strconv.Itoa(len(b))}})
	return x.(*file), nil
}
