package postgres

import (
	"context"
	"errors"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
)

var _ decoy.TemplateStore = (*DB)(nil)

func noTemplate() error { return decoy.Errorf(decoy.ENOTFOUND, "Mock api has no template") }

// SetTemplate stores the template of a mock, a change of the mock.
func (db *DB) SetTemplate(ctx context.Context, id string, t decoy.Template) (*decoy.Mock, error) {
	m, err := db.setTemplate(ctx, db.pool, id, t)
	return m, classify(err)
}

// setTemplate stores the template of mock id, through the pool or in a
// transaction.
func (db *DB) setTemplate(ctx context.Context, q querier, id string, t decoy.Template) (*decoy.Mock, error) {
	return scanMock(q.QueryRow(ctx, `
		UPDATE mocks SET template_mode = $1, template_type = $2, template = $3, version = version + 1, updated_at = $4
		WHERE id = $5 RETURNING `+mockColumns, t.Mode, t.ContentType, t.Body, db.now(), id))
}

// FindTemplate returns the template of a mock.
func (db *DB) FindTemplate(ctx context.Context, id string) (*decoy.Template, error) {
	var mode, ct *string
	var body []byte
	err := db.pool.QueryRow(ctx, `SELECT template_mode, template_type, template FROM mocks WHERE id = $1`, id).Scan(&mode, &ct, &body)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, notFound()
	case err != nil:
		return nil, classify(err)
	case mode == nil:
		return nil, noTemplate()
	}
	t := &decoy.Template{Mode: *mode, Body: body}
	if ct != nil {
		t.ContentType = *ct
	}
	return t, nil
}

// DeleteTemplate removes the template of a mock, a change of the mock.
func (db *DB) DeleteTemplate(ctx context.Context, id string) (*decoy.Mock, error) {
	m, err := scanMock(db.pool.QueryRow(ctx, `
		UPDATE mocks SET template_mode = NULL, template_type = NULL, template = NULL, version = version + 1, updated_at = $1
		WHERE id = $2 AND template_mode IS NOT NULL RETURNING `+mockColumns, db.now(), id))
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		var exists bool
		if qerr := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mocks WHERE id = $1)`, id).Scan(&exists); qerr == nil && exists {
			return nil, noTemplate()
		}
	}
	return m, classify(err)
}
