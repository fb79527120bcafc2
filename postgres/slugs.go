package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Slugs (§11.1 of the contract) name projects in the URLs of their routes:
// unique on the server (the constraint projects_slug_key), derived from a
// project's name when it is created (decoy.Slugify), with "-2", "-3", …
// appended while taken (decoy.SlugCandidate).

// firstFreeSlug returns the first candidate slug for a project named name
// that taken does not hold.
func firstFreeSlug(name string, taken map[string]bool) (string, error) {
	base := decoy.Slugify(name)
	// Of len(taken)+1 candidates, one at least is free.
	for n := 1; n <= len(taken)+1; n++ {
		if c := decoy.SlugCandidate(base, n); !taken[c] {
			if !decoy.ValidSlug(c) { // past 99999 projects of one name
				return "", fmt.Errorf("no free slug for %q", name)
			}
			return c, nil
		}
	}
	panic("unreachable")
}

// freeSlug returns the slug a project named name gets: the first of its
// candidates no project has. It reads every slug its candidates could be,
// the base and those that start with the base and '-', in one range of
// the index of slugs (the column's collation is "C": '.' follows '-').
func freeSlug(ctx context.Context, q querier, name string) (string, error) {
	base := decoy.Slugify(name)
	rows, err := q.Query(ctx, `SELECT slug FROM projects WHERE slug = $1 OR (slug > $2 AND slug < $3)`, base, base+"-", base+".")
	if err != nil {
		return "", err
	}
	slugs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool, len(slugs))
	for _, s := range slugs {
		taken[s] = true
	}
	return firstFreeSlug(name, taken)
}

// slugLock is the first key of the advisory locks that serialise the
// derivations of slugs from one base ("slug" in ASCII); the second is the
// base's hash.
const slugLock int32 = 0x736c7567

// slugAttempts bounds the slugs insertProject derives for one project: a
// derived slug is taken meanwhile only by a project given it, or renamed
// to it, as derivations from one base take turns.
const slugAttempts = 5

// insertProject stores a project with the slug given, ErrSlugTaken when
// another project has it, or else one derived from its name. Creations
// deriving from the same base take turns (an advisory lock until the
// transaction ends; every workspace's default project derives from
// "default"), so that concurrent ones do not all try the same candidate;
// a derived slug taken meanwhile all the same is derived again.
func insertProject(ctx context.Context, tx pgx.Tx, id, workspaceID, name, slug string, at time.Time) (*decoy.Project, error) {
	if slug != "" && !decoy.ValidSlug(slug) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid slug")
	}
	if slug == "" {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, slugLock, decoy.Slugify(name)); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		s := slug
		if s == "" {
			var err error
			if s, err = freeSlug(ctx, tx, name); err != nil {
				return nil, err
			}
		}
		// A savepoint, so that the transaction goes on after a violation.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, err
		}
		p, err := scanProject(sp.QueryRow(ctx, `INSERT INTO projects (id, workspace_id, name, slug, created_at) VALUES ($1, $2, $3, $4, $5)
			RETURNING `+projectColumns, id, workspaceID, name, s, stamp(at)))
		if err == nil {
			return p, sp.Commit(ctx)
		}
		sp.Rollback(ctx)
		var pgErr *pgconn.PgError
		if slug == "" && attempt < slugAttempts && errors.As(err, &pgErr) && pgErr.ConstraintName == "projects_slug_key" {
			continue
		}
		return nil, projectConflict(err, id)
	}
}

// deriveSlugs is the migration that gives every project of a database
// made before slugs its slug, from its name, in creation order: the
// default project of the default workspace first, so that it has
// "default" (every workspace has a project named so; the others become
// default-2, default-3, …).
func deriveSlugs(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT id, name, slug FROM projects ORDER BY id = $1 DESC, seq`, decoy.DefaultProjectID)
	if err != nil {
		return err
	}
	type project struct {
		id, name string
		slug     *string
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (p project, err error) {
		err = r.Scan(&p.id, &p.name, &p.slug)
		return p, err
	})
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, p := range ps {
		if p.slug != nil {
			taken[*p.slug] = true
		}
	}
	for _, p := range ps {
		if p.slug != nil {
			continue
		}
		slug, err := firstFreeSlug(p.name, taken)
		if err != nil {
			return err
		}
		taken[slug] = true
		if _, err := tx.Exec(ctx, `UPDATE projects SET slug = $1 WHERE id = $2`, slug, p.id); err != nil {
			return err
		}
	}
	return nil
}

// FindProjectBySlug returns the project of a slug.
func (db *DB) FindProjectBySlug(ctx context.Context, slug string) (*decoy.Project, error) {
	p, err := scanProject(db.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects WHERE slug = $1`, slug))
	return p, classify(err)
}

// SetProjectSlug changes a project's slug, a change of its routes' URLs:
// its routes_version advances.
func (db *DB) SetProjectSlug(ctx context.Context, projectID, slug string) (*decoy.Project, error) {
	if !decoy.ValidSlug(slug) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid slug")
	}
	p, err := scanProject(db.pool.QueryRow(ctx, `UPDATE projects SET slug = $1, routes_version = routes_version + 1
		WHERE id = $2 RETURNING `+projectColumns, slug, projectID))
	return p, classify(projectConflict(err, projectID))
}
