package admin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
)

// The versions of a mock's data (§9 of the contract), under
// /admin/v1/mocks/{id}/versions: the list, the data of one, and its
// restore, which writes that data again as a new version through the same
// path as an upload (writeData), so that the cache and the other replicas
// learn of it as of any data replaced.

// versionList is the answer of GET /admin/v1/mocks/{id}/versions.
type versionList struct {
	Versions []decoy.Version `json:"versions"`
}

// versionsKept is nil when the server keeps versions; else the version
// routes are not found.
func (s *API) versionsKept() error {
	if s.cfg.Versions == nil {
		return answer.ErrNotFound
	}
	return nil
}

// getVersionData is GET /admin/v1/mocks/{mock}/versions/{v}/data.
func (s *API) getVersionData(w http.ResponseWriter, r *http.Request, id string) error {
	return s.versionData(w, r, id, callOf(r).params["v"])
}

// postRestore is POST /admin/v1/mocks/{mock}/versions/{v}/restore.
func (s *API) postRestore(w http.ResponseWriter, r *http.Request, id string) error {
	return s.restoreVersion(w, r, id, callOf(r).params["v"])
}

func (s *API) listVersions(w http.ResponseWriter, r *http.Request, id string) error {
	if err := s.versionsKept(); err != nil {
		return err
	}
	vs, err := s.cfg.Versions.MockVersions(r.Context(), id)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, versionList{Versions: vs})
	return nil
}

// findVersion returns version text of mock id and its data, for the
// caller to close. A text that is not a version number is a version not
// found, once the mock is found.
func (s *API) findVersion(r *http.Request, id, text string) (*decoy.Version, decoy.Data, error) {
	if err := s.versionsKept(); err != nil {
		return nil, decoy.Data{}, err
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != text {
		if _, err := s.cfg.Store.FindMock(r.Context(), id); err != nil {
			return nil, decoy.Data{}, err
		}
		return nil, decoy.Data{}, decoy.ErrVersionNotFound()
	}
	return s.cfg.Versions.FindVersionData(r.Context(), id, n)
}

// versionData answers the data of a version as it was stored, with its
// content type, as GET /admin/v1/mocks/{id}/data answers the current one.
func (s *API) versionData(w http.ResponseWriter, r *http.Request, id, text string) error {
	v, d, err := s.findVersion(r, id, text)
	if err != nil {
		return err
	}
	var body io.Reader
	if d.File != nil {
		defer d.File.Close()
		body = d.File
	} else {
		body = bytes.NewReader(d.Bytes)
	}
	h := w.Header()
	h.Set("Content-Type", v.ContentType)
	h.Set("Content-Length", strconv.FormatInt(v.Size, 10))
	answer.SetHeader(h, "ETag", v.ETag)
	h.Set("X-Content-Type-Options", "nosniff")
	// Shown as it is, whatever it holds: never run as a page of this origin.
	h.Set("Content-Security-Policy", "sandbox")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, io.LimitReader(body, v.Size))
	return nil
}

// restoreVersion makes a version's data the mock's data again, as a new
// version, and answers the mock as PUT data does.
func (s *API) restoreVersion(w http.ResponseWriter, r *http.Request, id, text string) error {
	v, d, err := s.findVersion(r, id, text)
	if err != nil {
		return err
	}
	up, err := s.uploadOf(v, d)
	if err != nil {
		return err
	}
	defer up.discard()
	m, err := s.writeData(r, id, up)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}

// uploadOf copies a version's data into a file of the upload folder, as if
// it were sent again: the store then takes it over as it does an upload,
// while the version keeps its own. It closes d. A version larger than
// MaxDataBytes (lowered since it was stored) is refused as its upload
// would be.
func (s *API) uploadOf(v *decoy.Version, d decoy.Data) (*upload, error) {
	var src io.Reader = bytes.NewReader(d.Bytes)
	if d.File != nil {
		defer d.File.Close()
		src = d.File
	}
	if max := s.cfg.MaxDataBytes; v.Size > max {
		return nil, errTooLarge(max)
	}
	f, err := os.CreateTemp(s.cfg.UploadDir, "restore-*")
	if err != nil {
		return nil, uploadFileError("create", err)
	}
	u := &upload{contentType: v.ContentType, file: f}
	if _, err := io.Copy(f, io.LimitReader(src, v.Size)); err != nil {
		u.discard()
		return nil, uploadFileError("write", err)
	}
	if u.doc, err = docfile.Load(f); err != nil {
		u.discard()
		return nil, decoy.Errorf(decoy.EINTERNAL, "map restored version: %v", err)
	}
	if u.doc.Size() != v.Size {
		u.discard()
		return nil, decoy.Errorf(decoy.EINTERNAL, "restore version %d of mock: read %d bytes of %d", v.Version, u.doc.Size(), v.Size)
	}
	return u, nil
}

// errNoWrites answers the calls on live data of a server whose store
// keeps no writes.
var errNoWrites = answer.New(http.StatusNotImplemented, "This server's store does not keep writes")

// liveStore returns the store's live data (§12.2), or errNoWrites.
func (s *API) liveStore() (decoy.LiveStore, error) {
	live, ok := s.cfg.Store.(decoy.LiveStore)
	if !ok {
		return nil, errNoWrites
	}
	return live, nil
}

// postReset is POST /admin/v1/mocks/{id}/reset: the live data goes back to
// the current version (§12.2), and the mock is answered.
func (s *API) postReset(w http.ResponseWriter, r *http.Request, id string) error {
	live, err := s.liveStore()
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	m, err := live.ResetLive(ctx, id)
	s.announce(ctx, id)
	s.cache.Remove(id)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}

// maxSnapshotAttempts bounds how many times a snapshot reads the live data
// again because writes came while it was saved.
const maxSnapshotAttempts = 8

// postSnapshot is POST /admin/v1/mocks/{id}/versions: the live data, as
// the store has it now, becomes a new version (§12.2), answered with 201.
// Writes that come while it is saved are not lost: the store refuses a
// snapshot of live data that moved on, and it is taken again.
func (s *API) postSnapshot(w http.ResponseWriter, r *http.Request, id string) error {
	if err := s.versionsKept(); err != nil {
		return err
	}
	if _, err := s.liveStore(); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	for attempt := 1; ; attempt++ {
		m, err := s.snapshot(ctx, id)
		if decoy.ErrorCode(err) == decoy.ECONFLICT && attempt < maxSnapshotAttempts {
			continue
		}
		s.announce(ctx, id)
		s.cache.Remove(id)
		if err != nil {
			return err
		}
		vs, err := s.cfg.Versions.MockVersions(ctx, id)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v.Current {
				answer.JSON(w, http.StatusCreated, v)
				return nil
			}
		}
		answer.JSON(w, http.StatusCreated, m)
		return nil
	}
}

// snapshot saves the newest live data of mock id as its current version,
// unless it moved on meanwhile (ECONFLICT).
func (s *API) snapshot(ctx context.Context, id string) (*decoy.Mock, error) {
	ne, err := s.liveEntry(ctx, id)
	if err != nil {
		return nil, err
	}
	defer ne.Release()
	return s.snapshotOf(ctx, id, ne)
}

// liveEntry returns the cache's entry of mock id caught up with the
// newest live data; the caller releases it.
func (s *API) liveEntry(ctx context.Context, id string) (*mockcache.Entry, error) {
	e, err := s.cache.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.cache.CatchUp(ctx, e) // takes over the reference to e
}

// snapshotOf saves the live data ne holds as mock id's current version,
// unless it moved on meanwhile (ECONFLICT).
func (s *API) snapshotOf(ctx context.Context, id string, ne *mockcache.Entry) (*decoy.Mock, error) {
	seq := ne.LiveSeq()
	return s.cfg.Store.ReplaceMockData(ctx, id, decoy.MockData{ContentType: ne.Mock.ContentType,
		Data: decoy.Data{Bytes: ne.Bytes()}, ETag: jsondoc.ETag(ne.Bytes()), IfLiveSeq: &seq})
}

// keepLive saves the live data of mock id as a version before a data
// write replaces it, when writes through its routes changed it: a data
// write keeps the data it replaces (§9), and what the mock answered was
// its live data, which its versions do not hold (§12.2). It returns the
// number of the live data the replace must find (decoy.MockData's
// IfLiveSeq), so that a route's write that comes in between makes the
// replace a conflict rather than go unseen; nil when no live data can be
// kept (no versions, no writes).
func (s *API) keepLive(ctx context.Context, id string) (*int64, error) {
	if !s.keepsLive() {
		return nil, nil
	}
	if m, err := s.cfg.Store.FindMock(ctx, id); err == nil && m.LiveSeq == 0 {
		// Never written through a route nor reset: no live data to keep,
		// and no document to load to know it.
		var none int64
		return &none, nil
	}
	ne, err := s.liveEntry(ctx, id)
	if err != nil {
		return nil, err
	}
	defer ne.Release()
	return s.keepLiveOf(ctx, id, ne)
}

// keepsLive reports whether live data can be kept: versions are, and
// writes through routes change it.
func (s *API) keepsLive() bool {
	_, err := s.liveStore()
	return s.versionsKept() == nil && err == nil
}

// keepLiveOf is keepLive of the live data ne, an entry of mock id, holds
// (a caller that made new data from it): ECONFLICT when a route's write
// came in since.
func (s *API) keepLiveOf(ctx context.Context, id string, ne *mockcache.Entry) (*int64, error) {
	seq := ne.LiveSeq()
	if !ne.Changed() {
		return &seq, nil
	}
	m, err := s.snapshotOf(ctx, id, ne)
	s.announce(ctx, id)
	s.cache.Remove(id)
	if err != nil {
		return nil, err
	}
	return &m.LiveSeq, nil
}

// liveMoved reports whether mock id's live data is no longer numbered seq:
// a route's write (or a reset) came in since.
func (s *API) liveMoved(ctx context.Context, id string, seq *int64) bool {
	if seq == nil {
		return false
	}
	m, err := s.cfg.Store.FindMock(ctx, id)
	return err == nil && m.LiveSeq != *seq
}

// replaceKeepingLive replaces mock id's data with d, keeping its live data
// first (keepLive), and returns the cache's generation taken after that,
// for the caller's PutAt. A route's write that comes in between makes it
// start again, after a pause that grows, a few times (keptLive).
func (s *API) replaceKeepingLive(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, uint64, error) {
	if s.cfg.WriteTurn != nil {
		// This replica's route writes wait their turn meanwhile: only
		// another replica's can come in between.
		turn := s.cfg.WriteTurn(id)
		turn.Lock()
		defer turn.Unlock()
	}
	var m *decoy.Mock
	var gen uint64
	err := s.keptLive(ctx, id, func(seq *int64) error {
		gen = s.cache.Generation()
		d.IfLiveSeq = seq
		var err error
		m, err = s.cfg.Store.ReplaceMockData(ctx, id, d)
		return err
	})
	return m, gen, err
}

// keptLive runs write, a data write of mock id that must find its live
// data numbered seq (decoy.MockData's IfLiveSeq), after keepLive; both are
// taken again, maxSnapshotAttempts times at most, while route writes come
// in between. Past that, the conflict says so.
func (s *API) keptLive(ctx context.Context, id string, write func(seq *int64) error) error {
	for attempt := 1; ; attempt++ {
		seq, err := s.keepLive(ctx, id)
		if err == nil {
			if err = write(seq); decoy.ErrorCode(err) == decoy.ECONFLICT && !s.liveMoved(ctx, id, seq) {
				return err // a conflict of its own
			}
		}
		if decoy.ErrorCode(err) != decoy.ECONFLICT {
			return err
		}
		if attempt == maxSnapshotAttempts {
			return decoy.Errorf(decoy.ECONFLICT, "Mock %s is being written through its routes: its data was not replaced; try again", id)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
}
