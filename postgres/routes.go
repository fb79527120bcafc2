package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// This file keeps projects' routes (§11 of the contract). A trigger on the
// routes table advances the project's routes_version with every change to
// them, those a deleted mock or project makes by its foreign keys included
// (migration 0015_routes.sql).
//
// Every write of a project's routes locks the project's row first
// (lockProject), as DeleteMock does for the routes its mock takes with it:
// the writes of one project's routes, and their checks (shapes, the
// bound), are serialised across replicas, and every transaction that
// changes routes takes the project before the routes and mocks, so that
// none waits on another in a cycle.

var _ decoy.RouteStore = (*DB)(nil)

// lockProject locks a project's row until the transaction ends;
// projectNotFound when there is none.
func lockProject(ctx context.Context, tx pgx.Tx, id string) error {
	var found string
	err := tx.QueryRow(ctx, `SELECT id FROM projects WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&found)
	if errors.Is(err, pgx.ErrNoRows) {
		return projectNotFound()
	}
	return err
}

const routeColumns = `id, project_id, method, path, mock_id, action, bind, items, rules, request_schema, created_at, updated_at`

func scanRoute(s scanner) (*decoy.Route, error) {
	var r decoy.Route
	var bind, rules string
	if err := s.Scan(&r.ID, &r.ProjectID, &r.Method, &r.Path, &r.MockID, &r.Action, &bind, &r.Items, &rules, &r.RequestSchema, &r.CreatedAt, &r.UpdatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
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
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &r, nil
}

// FindRoute returns a route.
func (db *DB) FindRoute(ctx context.Context, id string) (*decoy.Route, error) {
	r, err := scanRoute(db.pool.QueryRow(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = $1`, id))
	return r, classify(err)
}

// ListRoutes lists a project's routes in creation order.
func (db *DB) ListRoutes(ctx context.Context, projectID string) (_ []*decoy.Route, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM projects WHERE id = $1`, projectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, projectNotFound()
	}
	rows, err := db.pool.Query(ctx, `SELECT `+routeColumns+` FROM routes WHERE project_id = $1 ORDER BY seq`, projectID)
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
	err := db.write(ctx, func(tx pgx.Tx) error {
		if err := lockProject(ctx, tx, r.ProjectID); err != nil {
			return err
		}
		nr := newRoute(r, db.now())
		if taken, err := exists(ctx, tx, `SELECT 1 FROM routes WHERE id = $1`, nr.ID); err != nil {
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
	nr.CreatedAt, nr.UpdatedAt = stamp(nr.CreatedAt), stamp(nr.UpdatedAt)
	if nr.Bind == nil {
		nr.Bind = map[string]string{}
	}
	return &nr
}

// lockRoute locks the project of route id (see lockProject) and returns
// the route as it is then.
func lockRoute(ctx context.Context, tx pgx.Tx, id string) (*decoy.Route, error) {
	var projectID string
	err := tx.QueryRow(ctx, `SELECT project_id FROM routes WHERE id = $1`, id).Scan(&projectID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, decoy.ErrRouteNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := lockProject(ctx, tx, projectID); err != nil {
		if decoy.ErrorCode(err) == decoy.ENOTFOUND { // gone with its project meanwhile
			return nil, decoy.ErrRouteNotFound
		}
		return nil, err
	}
	// A route never changes projects: the project locked is still its.
	return scanRoute(tx.QueryRow(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = $1`, id))
}

// UpdateRoute changes a route.
func (db *DB) UpdateRoute(ctx context.Context, id string, upd decoy.RouteUpdate) (*decoy.Route, error) {
	var updated []*decoy.Route
	err := db.write(ctx, func(tx pgx.Tx) error {
		old, err := lockRoute(ctx, tx, id)
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
		nr.UpdatedAt = db.now()
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
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, err := lockRoute(ctx, tx, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM routes WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
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
// new. It runs in a transaction that holds the project's lock.
func (db *DB) storeRoutes(ctx context.Context, tx pgx.Tx, projectID string, ws []routeWrite, maxRoutes int) ([]*decoy.Route, error) {
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
		n, err := count(ctx, tx, `SELECT count(*) FROM routes WHERE project_id = $1`, projectID)
		if err != nil {
			return nil, err
		}
		if n+int64(adding) > int64(maxRoutes) {
			return nil, decoy.Errorf(decoy.EINVALID, "A project has at most %d routes", maxRoutes)
		}
	}
	// A route may take the shape another one of the batch leaves: those
	// that change theirs leave it first, so that the unique constraint
	// sees no conflict on the way.
	if len(ws) > 1 {
		for _, w := range ws {
			if w.old != nil && w.old.Shape() != w.r.Shape() {
				if _, err := tx.Exec(ctx, `UPDATE routes SET shape = '#' || id WHERE id = $1`, w.r.ID); err != nil {
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
		rules, err := decoy.EncodeRules(r.Rules)
		if err != nil {
			return nil, err
		}
		if w.old == nil {
			out[i], err = scanRoute(tx.QueryRow(ctx, `
				INSERT INTO routes (id, project_id, method, path, shape, mock_id, action, bind, items, rules, request_schema, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING `+routeColumns,
				r.ID, projectID, r.Method, r.Path, decoy.PathShape(r.Path), r.MockID, r.Action, string(bind), r.Items, string(rules), r.RequestSchema,
				r.CreatedAt, r.UpdatedAt))
		} else {
			out[i], err = scanRoute(tx.QueryRow(ctx, `
				UPDATE routes SET method = $1, path = $2, shape = $3, mock_id = $4, action = $5, bind = $6, items = $7, rules = $8, request_schema = $9, updated_at = $10
				WHERE id = $11 RETURNING `+routeColumns,
				r.Method, r.Path, decoy.PathShape(r.Path), r.MockID, r.Action, string(bind), r.Items, string(rules), r.RequestSchema, r.UpdatedAt, r.ID))
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkRouteMock returns ErrMockNotInProject unless r's mock is in r's
// project. A mock never changes projects, and its deletion waits for the
// project's lock: what it finds holds to the commit.
func checkRouteMock(ctx context.Context, q querier, r *decoy.Route) error {
	var projectID string
	err := q.QueryRow(ctx, `SELECT project_id FROM mocks WHERE id = $1`, r.MockID).Scan(&projectID)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && projectID != r.ProjectID:
		return decoy.ErrMockNotInProject
	case err != nil:
		return err
	}
	return nil
}

// checkShapes returns RouteExists when a route of ws has the shape of
// another: of one of ws before it, or of a stored route of the project
// that ws does not replace.
func checkShapes(ctx context.Context, q querier, projectID string, ws []routeWrite) error {
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
		// The unique constraint holds at most one.
		existing, err := scanRoute(q.QueryRow(ctx, `SELECT `+routeColumns+` FROM routes WHERE project_id = $1 AND method = $2 AND shape = $3`,
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
// transaction: the paths of CreateMocks, ReplaceMockData and SetTemplate,
// then storeRoutes, and the workspace's limits checked on the whole. The
// documents are loaded one at a time, each released once its chunks are
// written (see decoy.ImportBatch.Load).
func (db *DB) WriteImport(ctx context.Context, b decoy.ImportBatch) (*decoy.ImportWritten, error) {
	out := &decoy.ImportWritten{}
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		if err := lockProject(ctx, tx, b.ProjectID); err != nil {
			return err
		}
		create, err := importMocks(b)
		if err != nil {
			return err
		}
		b.Create = create
		g := growth{}
		if out.Created, err = db.createMocks(ctx, tx, &b, g); err != nil {
			return err
		}
		for j, r := range b.Replace {
			var projectID string
			if err := tx.QueryRow(ctx, `SELECT project_id FROM mocks WHERE id = $1`, r.ID).Scan(&projectID); errors.Is(err, pgx.ErrNoRows) {
				return notFound()
			} else if err != nil {
				return err
			}
			if projectID != b.ProjectID {
				return notFound()
			}
			m, err := db.replaceLoaded(ctx, tx, &b, len(b.Create)+j, g)
			if err == nil && r.Template != nil {
				m, err = db.setTemplate(ctx, tx, r.ID, *r.Template)
			}
			if err != nil {
				return err
			}
			out.Replaced = append(out.Replaced, m)
		}
		ws, err := importRoutes(ctx, tx, b, db.now())
		if err != nil {
			return err
		}
		if out.Routes, err = db.storeRoutes(ctx, tx, b.ProjectID, ws, b.MaxRoutes); err != nil {
			return err
		}
		return g.check(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceLoaded gives the mock of b's document i, one of b.Replace, that
// document as its new data (see replaceData), loaded for the write alone.
func (db *DB) replaceLoaded(ctx context.Context, tx pgx.Tx, b *decoy.ImportBatch, i int, g growth) (*decoy.Mock, error) {
	r := b.Replace[i-len(b.Create)]
	data, release, err := b.Doc(ctx, i)
	if err != nil {
		return nil, err
	}
	defer release()
	d := r.Data
	d.Data = data
	return db.replaceData(ctx, tx, r.ID, d, g)
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
func importRoutes(ctx context.Context, q querier, b decoy.ImportBatch, now time.Time) ([]routeWrite, error) {
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
		old, err := scanRoute(q.QueryRow(ctx, `SELECT `+routeColumns+` FROM routes WHERE id = $1 AND project_id = $2`, r.ID, b.ProjectID))
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
