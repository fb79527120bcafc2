package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/decoy-mock/decoy"
)

var _ decoy.TemplateStore = (*DB)(nil)

func noTemplate() error { return decoy.Errorf(decoy.ENOTFOUND, "Mock api has no template") }

// SetTemplate stores the template of a mock, a change of the mock.
func (db *DB) SetTemplate(ctx context.Context, id string, t decoy.Template) (*decoy.Mock, error) {
	var m *decoy.Mock
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		m, err = db.setTemplate(ctx, tx, id, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// setTemplate stores the template of mock id in the write's transaction.
func (db *DB) setTemplate(ctx context.Context, q queryer, id string, t decoy.Template) (*decoy.Mock, error) {
	return scanMock(q.QueryRowContext(ctx, `
		UPDATE mocks SET template_mode = ?, template_type = ?, template = ?, version = version + 1, updated_at = ?
		WHERE id = ? RETURNING `+mockColumns, t.Mode, t.ContentType, t.Body, db.now(), id))
}

// FindTemplate returns the template of a mock.
func (db *DB) FindTemplate(ctx context.Context, id string) (*decoy.Template, error) {
	var mode, ct sql.NullString
	var body []byte
	err := db.reads.QueryRowContext(ctx, `SELECT template_mode, template_type, template FROM mocks WHERE id = ?`, id).Scan(&mode, &ct, &body)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, notFound()
	case err != nil:
		return nil, err
	case !mode.Valid:
		return nil, noTemplate()
	}
	return &decoy.Template{Mode: mode.String, ContentType: ct.String, Body: body}, nil
}

// DeleteTemplate removes the template of a mock, a change of the mock.
func (db *DB) DeleteTemplate(ctx context.Context, id string) (_ *decoy.Mock, err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	m, err := scanMock(db.writes.QueryRowContext(ctx, `
		UPDATE mocks SET template_mode = NULL, template_type = NULL, template = NULL, version = version + 1, updated_at = ?
		WHERE id = ? AND template_mode IS NOT NULL RETURNING `+mockColumns, db.now(), id))
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		var n int
		if qerr := db.writes.QueryRowContext(ctx, `SELECT COUNT(*) FROM mocks WHERE id = ?`, id).Scan(&n); qerr == nil && n > 0 {
			return nil, noTemplate()
		}
	}
	return m, err
}
