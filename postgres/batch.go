package postgres

import (
	"context"
	"sort"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
)

var _ decoy.MockBatchStore = (*DB)(nil)

// growth is what a transaction grew, by workspace: whether it added mocks,
// and bytes of data, checked against the workspaces' limits once it is
// written (see checkLimits).
type growth map[string]struct{ mocks, bytes bool }

func (g growth) add(workspaceID string, mocks, bytes bool) {
	x := g[workspaceID]
	x.mocks, x.bytes = x.mocks || mocks, x.bytes || bytes
	g[workspaceID] = x
}

// check runs checkLimits on each workspace grown, in id order, so that two
// transactions lock them in the same order.
func (g growth) check(ctx context.Context, tx pgx.Tx) error {
	ids := make([]string, 0, len(g))
	for id := range g {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := checkLimits(ctx, tx, id, g[id].mocks, g[id].bytes); err != nil {
			return err
		}
	}
	return nil
}

// CreateMocks stores new mocks with their data, rows and chunks, in one
// transaction, each in its project (the default one when it names none),
// and checks the limits of their workspaces once they are in.
func (db *DB) CreateMocks(ctx context.Context, mocks []decoy.NewMock) ([]*decoy.Mock, error) {
	var created []*decoy.Mock
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		g := growth{}
		if created, err = db.createMocks(ctx, tx, &decoy.ImportBatch{Create: mocks}, g); err != nil {
			return err
		}
		return g.check(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

// createMocks stores the mocks b creates in the transaction tx, each its
// data's version 1, and adds them to g. Their documents are loaded one at
// a time, each released once its chunks are written (see
// decoy.ImportBatch.Load).
func (db *DB) createMocks(ctx context.Context, tx pgx.Tx, b *decoy.ImportBatch, g growth) ([]*decoy.Mock, error) {
	created := make([]*decoy.Mock, 0, len(b.Create))
	now := db.now()
	for i, nm := range b.Create {
		m, size := nm.Mock, b.DocSize(i)
		workspaceID, projectID, err := placeMock(ctx, tx, m)
		if err != nil {
			return nil, err
		}
		g.add(workspaceID, true, size > 0)
		var tmode, ttype *string
		var tbody []byte
		if t := nm.Template; t != nil {
			tmode, ttype, tbody = &t.Mode, &t.ContentType, t.Body
		}
		c, err := scanMock(tx.QueryRow(ctx, `
			INSERT INTO mocks (id, name, private, token_hash, content_type, status, delay_ms,
				rate_limit, monthly_quota, size, etag, version, created_at, updated_at,
				workspace_id, project_id, template_mode, template_type, template)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $12, $12, $13, $14, $15, $16, $17)
			RETURNING `+mockColumns,
			m.ID, m.Name, m.Private, m.TokenHash, m.ContentType, m.Status, m.DelayMS,
			m.RateLimit, m.MonthlyQuota, size, m.ETag, now, workspaceID, projectID, tmode, ttype, tbody))
		switch pgCode(err) {
		case uniqueViolation: // only the id is unique
			return nil, decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists", m.ID)
		case foreignKeyViolation: // the project went meanwhile
			return nil, projectNotFound()
		}
		if err != nil {
			return nil, err
		}
		// The data is the mock's first version (§9 of the contract).
		if err := db.addVersion(ctx, tx, m.ID, 1, m.ContentType, size, m.ETag, now); err != nil {
			return nil, err
		}
		if err := writeLoaded(ctx, tx, b, i, m.ID); err != nil {
			return nil, err
		}
		created = append(created, c)
	}
	return created, nil
}

// writeLoaded writes document i of b (see decoy.ImportBatch.Doc) as the
// chunks of version 1 of mock id, and releases it.
func writeLoaded(ctx context.Context, tx pgx.Tx, b *decoy.ImportBatch, i int, id string) error {
	data, release, err := b.Doc(ctx, i)
	if err != nil {
		return err
	}
	defer release()
	return writeChunks(ctx, tx, versionChunks, id, 1, data.Bytes)
}
