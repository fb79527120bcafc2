package sqlite

import (
	"context"
	"database/sql"
	"sort"

	"github.com/decoy-mock/decoy"
)

var _ decoy.MockBatchStore = (*DB)(nil)

// docWrite is what a write that places documents did to the docs folder:
// the files it placed, removed again when its transaction does not commit,
// and the files its change stopped naming (versions past the bound),
// removed once it commits.
type docWrite struct {
	placed, gone []string
}

// writeDocs runs fn, a write that places documents, in a transaction on
// the write connection under writeMu, and removes the files of w as the
// transaction ends (see docWrite).
func (db *DB) writeDocs(ctx context.Context, fn func(tx *sql.Tx, w *docWrite) error) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var w docWrite
	if err = fn(tx, &w); err == nil {
		err = tx.Commit()
	}
	if err != nil {
		_ = tx.Rollback()
		for _, f := range w.placed {
			db.removeDoc(f)
		}
		return err
	}
	for _, f := range w.gone {
		db.removeDoc(f)
	}
	return nil
}

// growth is what a write adds to workspaces, by id: mocks and bytes of
// data, checked against their limits before it is made.
type growth map[string]struct{ mocks, bytes int64 }

func (g growth) add(workspaceID string, mocks, bytes int64) {
	x := g[workspaceID]
	x.mocks += mocks
	x.bytes += bytes
	g[workspaceID] = x
}

// addData adds to g what replacing the data of mock id, of workspace
// workspaceID, with size bytes adds: those, as a new version, less the
// bytes of the live data the replacement drops.
func (g growth) addData(ctx context.Context, q queryer, workspaceID, id string, size int64) error {
	r, err := readLiveRow(ctx, q, id)
	if err != nil {
		return err
	}
	g.add(workspaceID, 0, size-r.liveSize)
	return nil
}

// check refuses the growth when it takes a workspace past a limit (see
// checkLimits). Writes are serialised: what it sees still holds at the
// commit.
func (g growth) check(ctx context.Context, q queryer) error {
	ids := make([]string, 0, len(g))
	for id := range g {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := checkLimits(ctx, q, id, g[id].mocks, g[id].bytes); err != nil {
			return err
		}
	}
	return nil
}

// CreateMocks stores new mocks with their data in one transaction, each
// in its project (the default one when it names none) and its document in
// a file of its own: the files are written and synced before the commit,
// and removed again when the transaction does not commit.
func (db *DB) CreateMocks(ctx context.Context, mocks []decoy.NewMock) ([]*decoy.Mock, error) {
	var created []*decoy.Mock
	err := db.writeDocs(ctx, func(tx *sql.Tx, w *docWrite) error {
		g := growth{}
		b := &decoy.ImportBatch{Create: mocks}
		places, err := placeMocks(ctx, tx, b, g)
		if err != nil {
			return err
		}
		if err := g.check(ctx, tx); err != nil {
			return err
		}
		created, err = db.insertMocks(ctx, tx, w, b, places)
		return err
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

// place is where a new mock goes.
type place struct{ workspace, project string }

// placeMocks puts each mock b creates in its project (see placeMock) and
// adds them to g.
func placeMocks(ctx context.Context, q queryer, b *decoy.ImportBatch, g growth) ([]place, error) {
	places := make([]place, len(b.Create))
	for i, nm := range b.Create {
		w, p, err := placeMock(ctx, q, nm.Mock)
		if err != nil {
			return nil, err
		}
		places[i] = place{w, p}
		g.add(w, 1, b.DocSize(i))
	}
	return places, nil
}

// insertMocks stores the mocks b creates, placed by placeMocks, with their
// documents and templates, each its data's version 1. The documents are
// loaded one at a time (see decoy.ImportBatch.Load).
func (db *DB) insertMocks(ctx context.Context, tx *sql.Tx, w *docWrite, b *decoy.ImportBatch, places []place) ([]*decoy.Mock, error) {
	now := db.now()
	created := make([]*decoy.Mock, 0, len(b.Create))
	for i, nm := range b.Create {
		m := nm.Mock
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mocks WHERE id = ?`, m.ID).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 { // writes are serialised: still true at the insert
			return nil, decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists", m.ID)
		}
		file, err := db.placeLoaded(ctx, w, b, i, m.ID)
		if err != nil {
			return nil, err
		}
		size := b.DocSize(i)
		var tmode, ttype any
		var tbody []byte
		if t := nm.Template; t != nil {
			tmode, ttype, tbody = t.Mode, t.ContentType, t.Body
		}
		c, err := scanMock(tx.QueryRowContext(ctx, `
			INSERT INTO mocks (id, name, private, token_hash, content_type, status, delay_ms,
				rate_limit, monthly_quota, size, etag, version, created_at, updated_at, data_file,
				workspace_id, project_id, template_mode, template_type, template)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING `+mockColumns,
			m.ID, m.Name, m.Private, m.TokenHash, m.ContentType, m.Status, m.DelayMS,
			nullable(m.RateLimit), nullable(m.MonthlyQuota), size, m.ETag, now, now, file,
			places[i].workspace, places[i].project, tmode, ttype, tbody))
		if err != nil {
			return nil, err
		}
		// The data is the mock's first version (§9 of the contract).
		if _, err := db.addVersion(ctx, tx, m.ID, 1, m.ContentType, size, m.ETag, now, file); err != nil {
			return nil, err
		}
		created = append(created, c)
	}
	return created, nil
}

// placeLoaded places document i of b (see decoy.ImportBatch.Doc), of mock
// id, in a file of the docs folder, noted in w, and releases it.
func (db *DB) placeLoaded(ctx context.Context, w *docWrite, b *decoy.ImportBatch, i int, id string) (string, error) {
	data, release, err := b.Doc(ctx, i)
	if err != nil {
		return "", err
	}
	defer release()
	file, err := db.placeDoc(id, data)
	if err != nil {
		return "", err
	}
	w.placed = append(w.placed, file)
	return file, nil
}
