package studio

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/decoy-mock/decoy/answer"
)

// dist is the built front end: web/build.mjs writes it, and it is committed,
// so that the binary builds without Node.
//
//go:embed dist
var dist embed.FS

// hashedName matches the file names the build gives its outputs,
// name-HASH.ext: their content never changes, so they are cached for a year.
var hashedName = regexp.MustCompile(`-[A-Z0-9]{8}\.[a-z0-9]+$`)

// asset is one embedded file, ready to serve. Its bytes are read from the
// binary on first use, so a server whose Studio is never opened keeps none
// of them in its heap.
type asset struct {
	path        string
	contentType string
	immutable   bool

	once    sync.Once
	data    []byte
	gzipped []byte // nil when compressing does not pay
	err     error
}

type assets struct {
	index *asset
	files map[string]*asset
}

// contentTypes are the types of the files the build makes, not left to the
// system's MIME tables: those differ between machines, and reading them
// keeps 0.4 MiB of heap for good.
var contentTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".map":   "application/json",
	".json":  "application/json",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
}

// loadAssets lists the embedded build. A build without index.html is a
// broken binary: it panics at start rather than serve a blank Studio.
func loadAssets() *assets {
	a := &assets{files: map[string]*asset{}}
	if _, err := fs.Stat(dist, "dist/index.html"); err != nil {
		panic("studio: the embedded build has no index.html; run npm run build in studio/web")
	}
	a.index = &asset{path: "dist/index.html", contentType: "text/html; charset=utf-8"}
	_ = fs.WalkDir(dist, "dist/assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := path.Base(p)
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		a.files[name] = &asset{path: p, contentType: ct, immutable: hashedName.MatchString(name)}
		return nil
	})
	return a
}

// securityHeaders are set on every Studio page and file.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// serveIndex and serveAsset serve the page and its files; the error they
// return is answered by Config.Fail, as the server answers every error.
func (a *assets) serveIndex(w http.ResponseWriter, r *http.Request) error {
	// Always revalidated, so that a new binary's page (naming new files)
	// is seen at once.
	w.Header().Set("Cache-Control", "no-cache")
	return a.index.serve(w, r)
}

func (a *assets) serveAsset(w http.ResponseWriter, r *http.Request, name string) error {
	f, ok := a.files[name]
	if !ok {
		return answer.ErrNotFound
	}
	if f.immutable {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	return f.serve(w, r)
}

var errAssetMethod = answer.New(http.StatusMethodNotAllowed, "Method not allowed", "Allow", "GET, HEAD")

func (f *asset) serve(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return errAssetMethod
	}
	body, gz, err := f.load()
	if err != nil {
		// Internal: logged, and answered with no-store, not cached for
		// the year a file is kept.
		return fmt.Errorf("read the embedded %s: %w", f.path, err)
	}
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", f.contentType)
	h.Add("Vary", "Accept-Encoding")
	if gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// load returns the file, and the file compressed or nil when it is small or
// does not compress, reading and compressing it once. It fails only for a
// file of the embedded build that cannot be read: never, in a binary that
// built.
func (f *asset) load() (data, gzipped []byte, err error) {
	f.once.Do(func() {
		if f.data, f.err = dist.ReadFile(f.path); f.err != nil {
			return
		}
		if len(f.data) < 1024 {
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(f.data)
		zw.Close()
		if b.Len() < len(f.data)*9/10 {
			f.gzipped = b.Bytes()
		}
	})
	return f.data, f.gzipped, f.err
}

// acceptsGzip reports whether an Accept-Encoding header names gzip with a
// q-value above zero.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		k, v, _ := strings.Cut(strings.TrimSpace(params), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
		return true
	}
	return false
}
