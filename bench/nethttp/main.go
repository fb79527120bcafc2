// Command nethttp is the benchmark's second floor: it serves the files nginx
// serves (Decoy's answers, written under one folder) with Go's net/http and
// nothing else, so that a run shows what net/http itself costs to send
// Decoy's bytes, next to what nginx costs.
//
// Like nginx's gzip_static, a client whose Accept-Encoding names gzip gets
// NAME.gz when it exists, with Content-Encoding: gzip. The headers in
// NAME.head (NAME.gz.head), in the wire's form, are sent with the file:
// the bench writes there the headers Decoy sent with the same answer, so
// that net/http sends the same bytes with the same headers as Decoy. A file is read once,
// at its first request, and kept: the bytes are then sent from memory, as
// Decoy sends a kept answer. What is kept is bounded (-keep, 16 MiB; a
// larger file is kept alone): past it, the files kept before are dropped
// and their memory given back, so that the bench's peak memory of one
// query is not that of the queries before it. The 1,000 small answers of
// the many-mocks phase fit.
//
//	nethttp -addr 127.0.0.1:8081 -root www
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/textproto"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	root := flag.String("root", ".", "folder of the files served")
	keep := flag.Int64("keep", 16<<20, "most bytes of files kept in memory (a larger file is kept alone)")
	flag.Parse()
	if err := http.ListenAndServe(*addr, newFiles(os.DirFS(*root), *keep)); err != nil {
		fmt.Fprintln(os.Stderr, "nethttp:", err)
		os.Exit(1)
	}
}

// files answers GET and HEAD with the file the path names, read once.
type files struct {
	fsys   fs.FS
	budget int64

	mu    sync.RWMutex
	kept  map[string]*file
	bytes int64
}

// file is a file's bytes and its Content-Length header value, or, when
// missing is set, a name that is no file.
type file struct {
	body    []byte
	length  []string
	head    http.Header // sent with body, from NAME.head
	missing bool
}

// minCost is what a kept name counts for at least, so that names that are
// no file are bounded too.
const minCost = 1 << 10

func newFiles(fsys fs.FS, budget int64) *files {
	return &files{fsys: fsys, budget: budget, kept: map[string]*file{}}
}

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
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		if gz, err := f.get(name + ".gz"); err == nil && !gz.missing {
			w.Header()["Content-Encoding"] = valGzip
			f.send(w, r, gz)
			return
		}
	}
	switch plain, err := f.get(name); {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case plain.missing:
		http.NotFound(w, r)
	default:
		f.send(w, r, plain)
	}
}

func (f *files) send(w http.ResponseWriter, r *http.Request, x *file) {
	h := w.Header()
	for k, v := range x.head {
		h[k] = v
	}
	h["Content-Type"] = valJSON
	h["Content-Length"] = x.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(x.body)
	}
}

// get returns the named file, reading it at its first request. A name that
// is no file (missing, invalid, a folder) is kept as missing.
func (f *files) get(name string) (*file, error) {
	f.mu.RLock()
	x := f.kept[name]
	f.mu.RUnlock()
	if x != nil {
		return x, nil
	}
	b, err := fs.ReadFile(f.fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.EISDIR):
		x = &file{missing: true}
	case err != nil:
		return nil, err
	default:
		x = &file{body: b, length: []string{strconv.Itoa(len(b))}}
		if x.head, err = readHead(f.fsys, name+".head"); err != nil {
			return nil, err
		}
	}
	cost := max(int64(len(b)), minCost)
	f.mu.Lock()
	if cur := f.kept[name]; cur != nil {
		f.mu.Unlock()
		return cur, nil
	}
	dropped := f.bytes+cost > f.budget && len(f.kept) > 0
	if dropped {
		clear(f.kept)
		f.bytes = 0
	}
	f.kept[name] = x
	f.bytes += cost
	f.mu.Unlock()
	if dropped {
		debug.FreeOSMemory()
	}
	return x, nil
}

// readHead reads the headers in the named file, in the wire's form (nil
// when there is no such file).
func readHead(fsys fs.FS, name string) (http.Header, error) {
	b, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(b, '\r', '\n')))).ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return http.Header(h), nil
}
