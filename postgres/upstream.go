package postgres

import (
	"context"

	"github.com/decoy-mock/decoy"
)

// SetProjectUpstream sets a project's upstream and mode (§14), a change of
// how its routes answer: its routes_version advances.
func (db *DB) SetProjectUpstream(ctx context.Context, projectID string, up decoy.ProjectUpstream) (*decoy.Project, error) {
	if err := decoy.CheckProjectUpstream(up); err != nil {
		return nil, err
	}
	p, err := scanProject(db.pool.QueryRow(ctx, `UPDATE projects SET upstream = $1, mode = $2, routes_version = routes_version + 1
		WHERE id = $3 RETURNING `+projectColumns, up.Upstream, up.Mode, projectID))
	return p, classify(err)
}
