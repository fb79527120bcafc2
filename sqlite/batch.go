package sqlite

import (
	"context"

	"github.com/decoy-mock/decoy"
)

var _ decoy.MockBatchStore = (*DB)(nil)

// CreateMocks stores new mocks with their data in one transaction, each
// in its project (the default one when it names none) and its document in
// a file of its own: the files are written and synced before the commit,
// and removed again when the transaction does not commit.
func (db *DB) CreateMocks(ctx context.Context, mocks []decoy.NewMock) (_ []*decoy.Mock, err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	// Each mock in its project, and the limits of their workspaces checked
	// for the whole batch, before the transaction takes the one write
	// connection: writes are serialised, so they still hold at the commit.
	type place struct{ workspace, project string }
	places := make([]place, len(mocks))
	grow := map[string][2]int64{} // workspace: mocks and bytes added
	for i, nm := range mocks {
		size := int64(len(nm.Data.Bytes))
		w, p, err := db.placeMock(ctx, nm.Mock, size)
		if err != nil {
			return nil, err
		}
		places[i] = place{w, p}
		g := grow[w]
		grow[w] = [2]int64{g[0] + 1, g[1] + size}
	}
	for w, g := range grow {
		if err := checkLimits(ctx, db.writes, w, g[0], g[1]); err != nil {
			return nil, err
		}
	}
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	var placed []string
	defer func() {
		if err != nil {
			_ = tx.Rollback()
			for _, f := range placed {
				db.removeDoc(f)
			}
		}
	}()
	now := db.now()
	created := make([]*decoy.Mock, 0, len(mocks))
	for i, nm := range mocks {
		m := nm.Mock
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mocks WHERE id = ?`, m.ID).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 { // writes are serialised: still true at the insert
			return nil, decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists", m.ID)
		}
		file, err := db.placeDoc(m.ID, nm.Data)
		if err != nil {
			return nil, err
		}
		placed = append(placed, file)
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
			nullable(m.RateLimit), nullable(m.MonthlyQuota), len(nm.Data.Bytes), m.ETag, now, now, file,
			places[i].workspace, places[i].project, tmode, ttype, tbody))
		if err != nil {
			return nil, err
		}
		// The data is the mock's first version (§9 of the contract).
		if _, err := db.addVersion(ctx, tx, m.ID, 1, m.ContentType, int64(len(nm.Data.Bytes)), m.ETag, now, file); err != nil {
			return nil, err
		}
		created = append(created, c)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return created, nil
}
