package importer

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
)

// An import that streams: an export's data files are written to files of
// their own as the archive is read, never held in memory, so that an
// export is read with memory that does not grow with its data (the
// manifest aside, bounded by maxManifestBytes). The manifest comes last
// in the archive (ExportWriter writes it at Close), so each data file is
// kept until it says which mock it is.

// SpoolError is a failure to write a data file of an export to the
// spool folder (a full disk, say): the server's doing, not the file's.
type SpoolError struct{ Err error }

func (e *SpoolError) Error() string { return "spool an export's data: " + e.Err.Error() }
func (e *SpoolError) Unwrap() error { return e.Err }

// SpoolExport reads a .tar.gz export from r as ReadExport does, checked
// as WalkExport checks it, but writes each data file into a file of its
// own in dir as it is read: the mocks of the result have no Data, but
// their Spool and Size. The caller removes the files with Result.Close;
// on an error they are removed already.
func SpoolExport(r io.Reader, l Limits, dir string) (_ *Result, err error) {
	l = l.withDefaults()
	var manifest []byte
	files := map[string]Mock{} // Spool and Size, by name in the export
	defer func() {
		if err != nil {
			for _, f := range files {
				_ = os.Remove(f.Spool)
			}
		}
	}()
	err = WalkExport(r, l, func(name string, size int64, body io.Reader) error {
		switch {
		case name == ManifestName:
			manifest = make([]byte, size)
			if _, err := io.ReadFull(body, manifest); err != nil {
				return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: entry %s is cut short", name)
			}
		case path.Dir(name) == DataDir && strings.HasSuffix(name, ".json"):
			if _, dup := files[name]; dup {
				return decoy.Errorf(decoy.EINVALID, "The export holds %s twice", name)
			}
			spool, err := spoolFile(dir, name, size, body)
			if err != nil {
				return err
			}
			files[name] = Mock{Spool: spool, Size: size}
		default:
			return decoy.Errorf(decoy.EINVALID, "The export holds an unexpected file: %s", clip(name))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if manifest == nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Not a Decoy export: no %s", ManifestName)
	}
	taken := map[string]bool{}
	res, err := fromManifest(manifest, l, func(name string, m *Mock) error {
		f, ok := files[name]
		if !ok || taken[name] {
			return decoy.Errorf(decoy.EINVALID, "The export has no %s, which its manifest lists", name)
		}
		taken[name] = true
		m.Spool, m.Size = f.Spool, f.Size
		return nil
	}, func() error {
		for name := range files {
			if !taken[name] {
				return decoy.Errorf(decoy.EINVALID, "The export holds %s, which its manifest does not list", name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// spoolFile writes the size bytes of an export's entry name, read from
// body, to a new file in dir and returns its path.
func spoolFile(dir, name string, size int64, body io.Reader) (string, error) {
	f, err := os.CreateTemp(dir, "import-*")
	if err != nil {
		return "", &SpoolError{err}
	}
	fw := &writeError{w: f}
	_, err = io.CopyN(fw, body, size)
	if cerr := f.Close(); err == nil && cerr != nil {
		fw.err, err = cerr, cerr
	}
	switch {
	case err == nil:
		return f.Name(), nil
	case fw.err != nil:
		err = &SpoolError{fw.err}
	default:
		err = decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: entry %s is cut short", name)
	}
	_ = os.Remove(f.Name())
	return "", err
}

// writeError is a writer that remembers its error: io.CopyN does not say
// which side failed.
type writeError struct {
	w   io.Writer
	err error
}

func (w *writeError) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// ReadSpooled makes mocks and routes of a Decoy export read from r, its
// data files written to opt.Spool (see SpoolExport; empty: the system's
// temporary folder), its routes put under opt.BasePath as Read puts them.
func ReadSpooled(r io.Reader, opt Options) (*Result, error) {
	base, err := basePath(opt.BasePath)
	if err != nil {
		return nil, err
	}
	res, err := SpoolExport(r, opt.Limits, opt.Spool)
	if err != nil {
		return nil, err
	}
	if err := res.mount(base); err != nil {
		res.Close()
		return nil, err
	}
	return res, nil
}

// ExportDir is an export unpacked in a folder (decoy export --out DIR),
// its manifest checked, ready to be written as a .tar.gz.
type ExportDir struct {
	root *os.Root
	name string
	res  *Result
}

// OpenExportDir opens the export unpacked in dir and checks its manifest
// as an import checks it, and that every data file it lists is there.
// Files are opened within the folder only. The sizes are not bounded: the
// server that reads the archive bounds them.
func OpenExportDir(dir string) (*ExportDir, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	d := &ExportDir{root: root, name: filepath.Base(dir)}
	if d.res, err = d.read(); err != nil {
		root.Close()
		return nil, err
	}
	return d, nil
}

func (d *ExportDir) read() (*Result, error) {
	f, err := d.root.Open(ManifestName)
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", ManifestName, err)
	}
	manifest, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	f.Close()
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", ManifestName, err)
	}
	if len(manifest) > maxManifestBytes {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "%s of the export is larger than %d bytes", ManifestName, maxManifestBytes)
	}
	unbounded := Limits{MaxDataBytes: 1 << 50, MaxUnpackedBytes: 1 << 60, MaxMocks: 1 << 30, MaxRoutes: 1 << 30}
	return fromManifest(manifest, unbounded, func(name string, m *Mock) error {
		fi, err := d.root.Stat(name)
		if err != nil {
			return decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", name, err)
		}
		if !fi.Mode().IsRegular() {
			return decoy.Errorf(decoy.EINVALID, "%s of the export is not a regular file", name)
		}
		m.Size = fi.Size()
		return nil
	}, func() error { return nil })
}

// WriteTo writes the export to w as a .tar.gz, one data file at a time,
// copied from the folder as it is written: never held whole, whatever the
// size of the project.
func (d *ExportDir) WriteTo(w io.Writer, now time.Time) error {
	ew := NewExportWriter(w, d.name, now)
	ew.SetSlug(d.res.Slug)
	for _, m := range d.res.Mocks {
		if err := packFile(d.root, ew, m); err != nil {
			return err
		}
	}
	for _, r := range d.res.Routes {
		ew.AddRoute(ManifestRouteOf(r, d.res.Mocks[r.Mock].ID))
	}
	return ew.Close()
}

// Close closes the folder.
func (d *ExportDir) Close() error { return d.root.Close() }

// Result is the export's mocks, with their Size but no Data, and routes.
func (d *ExportDir) Result() *Result { return d.res }

// ReadData reads the data of mock m of the export, of at most limit
// bytes: one document at a time, whatever the size of the project.
func (d *ExportDir) ReadData(m Mock, limit int64) ([]byte, error) {
	name := DataPath(m.ID)
	f, err := d.root.Open(name)
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", name, err)
	}
	if int64(len(b)) > limit {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "%s of the export is larger than %d bytes", name, limit)
	}
	return b, nil
}

// packFile adds the data file of mock m, in root, to an export.
func packFile(root *os.Root, ew *ExportWriter, m Mock) error {
	f, err := root.Open(DataPath(m.ID))
	if err != nil {
		return decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", DataPath(m.ID), err)
	}
	defer f.Close()
	if err := ew.Add(ManifestOf(m), m.Size, f); err != nil {
		if fi, serr := f.Stat(); serr == nil && fi.Size() != m.Size {
			return fmt.Errorf("%s of the export changed while it was read", DataPath(m.ID))
		}
		return err
	}
	return nil
}

// MaxArchiveBytes is the most bytes a .tar.gz export read within l can
// take: its tar stream (the data files, the manifest, each entry's
// headers and padding, the end), and what gzip adds to data it cannot
// compress (5 bytes a stored block of up to 64 KiB, and its own header
// and trailer), with room to spare.
func MaxArchiveBytes(l Limits) int64 {
	l = l.withDefaults()
	tarBytes := l.MaxUnpackedBytes + maxManifestBytes + int64(2*l.MaxMocks+2)*tarEntryOverhead + tarRecordBytes
	return tarBytes + tarBytes/1024 + 1<<20
}
