package sqlite

import (
	"context"
	"database/sql"

	"github.com/decoy-mock/decoy"
)

// SetProjectUpstream sets a project's upstream and mode (§14), a change of
// how its routes answer: its routes_version advances.
func (db *DB) SetProjectUpstream(ctx context.Context, projectID string, up decoy.ProjectUpstream) (*decoy.Project, error) {
	if err := decoy.CheckProjectUpstream(up); err != nil {
		return nil, err
	}
	var p *decoy.Project
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		p, err = scanProject(tx.QueryRowContext(ctx, `UPDATE projects SET upstream = ?, mode = ?, routes_version = routes_version + 1
			WHERE id = ? RETURNING `+projectColumns, up.Upstream, up.Mode, projectID))
		return err
	})
	if err != nil {
		return nil, classify(err)
	}
	return p, nil
}
