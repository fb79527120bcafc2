package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/google/uuid"
)

// This file keeps projects' routes (§11 of the contract). Triggers on the
// routes table advance the project's routes_version with every change to
// them, those a deleted mock or project makes by its foreign keys
// included (migration 0015_routes.sql).

var _ decoy.RouteStore = (*DB)(nil)

const routeColumns = `id, project_id, method, path, mock_id, action, bind, items, rules, request_schema, created_at, updated_at`

func scanRoute(s scanner) (*decoy.Route, error) {
	var r decoy.Route
	var bind, rules string
	var items sql.NullString
	var created, updated int64
	if err := s.Scan(&r.ID, &r.ProjectID, &r.Method, &r.Path, &r.MockID, &r.Action, &bind, &items, &rules, &r.RequestSchema, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, decoy.ErrRouteNotFound
		}
		return nil, err
	}
	if err := json.Unmarshal([]byte(bind), &r.Bind); err != nil {
		return nil, fmt.Errorf("route %s: bind: %w", r.ID, err)
	}
	if r.Bind == nil {
		r.Bind = map[string]string{}
	}
	var err error
	if r.Rules, err = decoy.DecodeRules([]byte(rules)); err != nil {
		return nil, fmt.Errorf("route %s: rules: %w", r.ID, err)
	}
	if items.Valid {
		r.Items = &items.String
	}
	r.CreatedAt, r.UpdatedAt = fromMillis(created), fromMillis(updated)
	return &r, nil
}

// FindRoute returns a route.
func (db *DB) FindRoute(ctx context.Context, id string) (*decoy.Route, error) {
	r, err := scanRoute(db.reads.QueryRowContext(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = ?`, id))
	return r, classify(err)
}

// ListRoutes lists a project's routes in creation order.
func (db *DB) ListRoutes(ctx context.Context, projectID string) (_ []*decoy.Route, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM projects WHERE id = ?`, projectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, projectNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+routeColumns+` FROM routes WHERE project_id = ? ORDER BY seq`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	rs := []*decoy.Route{}
	for rows.Next() {
		r, err := scanRoute(rows)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, rows.Err()
}

// CreateRoute stores a new route.
func (db *DB) CreateRoute(ctx context.Context, r *decoy.Route, maxRoutes int) (*decoy.Route, error) {
	var created []*decoy.Route
	err := db.write(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ?`, r.ProjectID); err != nil {
			return err
		} else if !ok {
			return projectNotFound()
		}
		nr := newRoute(r, db.Now())
		if taken, err := exists(ctx, tx, `SELECT 1 FROM routes WHERE id = ?`, nr.ID); err != nil {
			return err
		} else if taken {
			return decoy.Errorf(decoy.ECONFLICT, "A route with id %s already exists", nr.ID)
		}
		var err error
		created, err = db.storeRoutes(ctx, tx, r.ProjectID, []routeWrite{{r: nr}}, maxRoutes)
		return err
	})
	if err != nil {
		return nil, err
	}
	return created[0], nil
}

// newRoute is r as a new route: its id and times filled in when empty, its
// bind never nil.
func newRoute(r *decoy.Route, now time.Time) *decoy.Route {
	nr := *r
	if nr.ID == "" {
		nr.ID = uuid.NewString()
	}
	if nr.CreatedAt.IsZero() {
		nr.CreatedAt = now
	}
	if nr.UpdatedAt.IsZero() {
		nr.UpdatedAt = nr.CreatedAt
	}
	if nr.Bind == nil {
		nr.Bind = map[string]string{}
	}
	return &nr
}

// UpdateRoute changes a route.
func (db *DB) UpdateRoute(ctx context.Context, id string, upd decoy.RouteUpdate) (*decoy.Route, error) {
	var updated []*decoy.Route
	err := db.write(ctx, func(tx *sql.Tx) error {
		old, err := scanRoute(tx.QueryRowContext(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = ?`, id))
		if err != nil {
			return err
		}
		nr := *old
		if upd.Method != nil {
			nr.Method = *upd.Method
		}
		if upd.Path != nil {
			nr.Path = *upd.Path
		}
		if upd.MockID != nil {
			nr.MockID = *upd.MockID
		}
		if upd.Action != nil {
			nr.Action = *upd.Action
		}
		if upd.Bind != nil {
			nr.Bind = *upd.Bind
		}
		if upd.Items != nil {
			nr.Items = upd.Items.Value
		}
		if upd.Rules != nil {
			nr.Rules = *upd.Rules
		}
		if nr.Bind == nil {
			nr.Bind = map[string]string{}
		}
		nr.UpdatedAt = db.Now()
		updated, err = db.storeRoutes(ctx, tx, old.ProjectID, []routeWrite{{r: &nr, old: old}}, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return updated[0], nil
}

// DeleteRoute deletes a route.
func (db *DB) DeleteRoute(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM routes WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return decoy.ErrRouteNotFound
		}
		return nil
	})
}

// routeWrite is a route to store: r replaces old, or is new when old is
// nil.
type routeWrite struct {
	r, old *decoy.Route
}

// storeRoutes stores routes of one project, after the checks of
// CreateRoute made against the project's routes as they are once all of
// them are stored: each route's mock is in the project, no two routes have
// one shape, and the project holds at most maxRoutes routes when some are
// new. It runs under writeMu, in the transaction of the write.
func (db *DB) storeRoutes(ctx context.Context, tx *sql.Tx, projectID string, ws []routeWrite, maxRoutes int) ([]*decoy.Route, error) {
	adding := 0
	for _, w := range ws {
		if w.old == nil {
			adding++
		}
		if err := checkRouteMock(ctx, tx, w.r); err != nil {
			return nil, err
		}
	}
	if err := checkShapes(ctx, tx, projectID, ws); err != nil {
		return nil, err
	}
	if adding > 0 {
		n, err := count(ctx, tx, `SELECT COUNT(*) FROM routes WHERE project_id = ?`, projectID)
		if err != nil {
			return nil, err
		}
		if n+int64(adding) > int64(maxRoutes) {
			return nil, decoy.Errorf(decoy.EINVALID, "A project has at most %d routes", maxRoutes)
		}
	}
	// A route may take the shape another one of the batch leaves: those
	// that change theirs leave it first, so that the unique index sees no
	// conflict on the way.
	if len(ws) > 1 {
		for _, w := range ws {
			if w.old != nil && w.old.Shape() != w.r.Shape() {
				if _, err := tx.ExecContext(ctx, `UPDATE routes SET shape = '#' || id WHERE id = ?`, w.r.ID); err != nil {
					return nil, err
				}
			}
		}
	}
	out := make([]*decoy.Route, len(ws))
	for i, w := range ws {
		r := w.r
		bind, err := json.Marshal(r.Bind)
		if err != nil {
			return nil, err
		}
		var items any
		if r.Items != nil {
			items = *r.Items
		}
		rules, err := decoy.EncodeRules(r.Rules)
		if err != nil {
			return nil, err
		}
		if w.old == nil {
			out[i], err = scanRoute(tx.QueryRowContext(ctx, `
				INSERT INTO routes (id, project_id, method, path, shape, mock_id, action, bind, items, rules, request_schema, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+routeColumns,
				r.ID, projectID, r.Method, r.Path, decoy.PathShape(r.Path), r.MockID, r.Action, string(bind), items, string(rules), r.RequestSchema,
				millis(r.CreatedAt), millis(r.UpdatedAt)))
		} else {
			out[i], err = scanRoute(tx.QueryRowContext(ctx, `
				UPDATE routes SET method = ?, path = ?, shape = ?, mock_id = ?, action = ?, bind = ?, items = ?, rules = ?, request_schema = ?, updated_at = ?
				WHERE id = ? RETURNING `+routeColumns,
				r.Method, r.Path, decoy.PathShape(r.Path), r.MockID, r.Action, string(bind), items, string(rules), r.RequestSchema, millis(r.UpdatedAt), r.ID))
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkRouteMock returns ErrMockNotInProject unless r's mock is in r's
// project.
func checkRouteMock(ctx context.Context, q queryer, r *decoy.Route) error {
	_, projectID, err := mockPlace(ctx, q, r.MockID)
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND || err == nil && projectID != r.ProjectID:
		return decoy.ErrMockNotInProject
	case err != nil:
		return err
	}
	return nil
}

// checkShapes returns RouteExists when a route of ws has the shape of
// another: of one of ws before it, or of a stored route of the project
// that ws does not replace.
func checkShapes(ctx context.Context, q queryer, projectID string, ws []routeWrite) error {
	replaced := make(map[string]bool, len(ws))
	for _, w := range ws {
		if w.old != nil {
			replaced[w.old.ID] = true
		}
	}
	seen := make(map[string]*decoy.Route, len(ws))
	for _, w := range ws {
		shape := w.r.Shape()
		if prev := seen[shape]; prev != nil {
			return decoy.RouteExists(prev)
		}
		seen[shape] = w.r
		// The unique index holds at most one.
		existing, err := scanRoute(q.QueryRowContext(ctx, `SELECT `+routeColumns+` FROM routes WHERE project_id = ? AND method = ? AND shape = ?`,
			projectID, w.r.Method, decoy.PathShape(w.r.Path)))
		switch {
		case err == nil && !replaced[existing.ID]:
			return decoy.RouteExists(existing)
		case err != nil && !errors.Is(err, decoy.ErrRouteNotFound):
			return err
		}
	}
	return nil
}

// WriteImport writes an import's mocks and routes into a project in one
// transaction, placing the documents of the mocks it creates and of the
// data it replaces in files removed again when it does not commit: the
// paths of CreateMocks, ReplaceMockData and SetTemplate, then
// storeRoutes. The documents are loaded one at a time, each released once
// its file is placed (see decoy.ImportBatch.Load), and the workspace's
// limits are checked on their sizes before any is.
func (db *DB) WriteImport(ctx context.Context, b decoy.ImportBatch) (*decoy.ImportWritten, error) {
	out := &decoy.ImportWritten{}
	err := db.writeDocs(ctx, func(tx *sql.Tx, w *docWrite) error {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ?`, b.ProjectID); err != nil {
			return err
		} else if !ok {
			return projectNotFound()
		}
		create, err := importMocks(b)
		if err != nil {
			return err
		}
		b.Create = create
		g := growth{}
		places, err := placeMocks(ctx, tx, &b, g)
		if err != nil {
			return err
		}
		for j, r := range b.Replace {
			workspaceID, projectID, err := mockPlace(ctx, tx, r.ID)
			if err != nil {
				return err
			}
			if projectID != b.ProjectID {
				return notFound()
			}
			if err := g.addData(ctx, tx, workspaceID, r.ID, b.DocSize(len(b.Create)+j)); err != nil {
				return err
			}
		}
		if err := g.check(ctx, tx); err != nil {
			return err
		}
		if out.Created, err = db.insertMocks(ctx, tx, w, &b, places); err != nil {
			return err
		}
		for j, r := range b.Replace {
			m, err := db.replaceLoaded(ctx, tx, w, &b, len(b.Create)+j)
			if err == nil && r.Template != nil {
				m, err = db.setTemplate(ctx, tx, r.ID, *r.Template)
			}
			if err != nil {
				return err
			}
			out.Replaced = append(out.Replaced, m)
		}
		ws, err := importRoutes(ctx, tx, b, db.Now())
		if err != nil {
			return err
		}
		out.Routes, err = db.storeRoutes(ctx, tx, b.ProjectID, ws, b.MaxRoutes)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceLoaded gives the mock of b's document i, one of b.Replace, that
// document as its new data (see replaceData), loaded for the write alone.
func (db *DB) replaceLoaded(ctx context.Context, tx *sql.Tx, w *docWrite, b *decoy.ImportBatch, i int) (*decoy.Mock, error) {
	r := b.Replace[i-len(b.Create)]
	data, release, err := b.Doc(ctx, i)
	if err != nil {
		return nil, err
	}
	defer release()
	d := r.Data
	d.Data = data
	return db.replaceData(ctx, tx, w, r.ID, d)
}

// importMocks are the mocks b creates, each in b's project.
func importMocks(b decoy.ImportBatch) ([]decoy.NewMock, error) {
	create := make([]decoy.NewMock, len(b.Create))
	for i, nm := range b.Create {
		m := *nm.Mock
		switch m.ProjectID {
		case "":
			m.ProjectID = b.ProjectID
		case b.ProjectID:
		default:
			return nil, decoy.Errorf(decoy.EINVALID, "Mock %s of an import into project %s is in another project", m.ID, b.ProjectID)
		}
		nm.Mock = &m
		create[i] = nm
	}
	return create, nil
}

// importRoutes are the writes of b's routes: new ones, and those that
// replace the route of their id (in b's project; each at most once),
// keeping its id and creation time.
func importRoutes(ctx context.Context, q queryer, b decoy.ImportBatch, now time.Time) ([]routeWrite, error) {
	ws := make([]routeWrite, len(b.Routes))
	given := make(map[string]bool, len(b.Routes))
	for i, r := range b.Routes {
		if r.ProjectID != "" && r.ProjectID != b.ProjectID {
			return nil, decoy.Errorf(decoy.EINVALID, "A route of an import into project %s is in another project", b.ProjectID)
		}
		nr := newRoute(r, now)
		nr.ProjectID = b.ProjectID
		if r.ID == "" {
			ws[i] = routeWrite{r: nr}
			continue
		}
		if given[r.ID] {
			return nil, decoy.Errorf(decoy.EINVALID, "Route %s is given twice", r.ID)
		}
		given[r.ID] = true
		old, err := scanRoute(q.QueryRowContext(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = ? AND project_id = ?`, r.ID, b.ProjectID))
		if err != nil {
			return nil, err
		}
		nr.CreatedAt, nr.UpdatedAt = old.CreatedAt, now
		if r.Rules == nil {
			nr.Rules = old.Rules // an import that knows nothing of rules keeps them
		}
		ws[i] = routeWrite{r: nr, old: old}
	}
	return ws, nil
}
