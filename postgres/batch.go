package postgres

import (
	"context"
	"errors"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var _ decoy.MockBatchStore = (*DB)(nil)

// CreateMocks stores new mocks with their data, rows and chunks, in one
// transaction, each in its project (the default one when it names none),
// and checks the limits of their workspaces once they are in.
func (db *DB) CreateMocks(ctx context.Context, mocks []decoy.NewMock) ([]*decoy.Mock, error) {
	created := make([]*decoy.Mock, 0, len(mocks))
	current := ""
	err := pgx.BeginTxFunc(ctx, db.pool, writeTx, func(tx pgx.Tx) error {
		now := db.now()
		grew := map[string]bool{} // workspace: whether its bytes grew
		for _, nm := range mocks {
			m, data := nm.Mock, nm.Data.Bytes
			current = m.ID
			workspaceID, projectID, err := placeMock(ctx, tx, m)
			if err != nil {
				return err
			}
			grew[workspaceID] = grew[workspaceID] || len(data) > 0
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
				m.RateLimit, m.MonthlyQuota, len(data), m.ETag, now, workspaceID, projectID, tmode, ttype, tbody))
			if err != nil {
				return err
			}
			// The data is the mock's first version (§9 of the contract).
			if err := db.addVersion(ctx, tx, m.ID, 1, m.ContentType, int64(len(data)), m.ETag, now); err != nil {
				return err
			}
			if err := writeChunks(ctx, tx, m.ID, 1, data); err != nil {
				return err
			}
			created = append(created, c)
		}
		for workspaceID, bytes := range grew {
			if err := checkLimits(ctx, tx, workspaceID, true, bytes); err != nil {
				return err
			}
		}
		return nil
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation: only the id is unique
		return nil, decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists", current)
	}
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation: the project went meanwhile
		return nil, projectNotFound()
	}
	if err != nil {
		return nil, classify(err)
	}
	return created, nil
}
