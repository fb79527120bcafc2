package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/decoy-mock/decoy"
)

// Slugs (§11.1 of the contract) name projects in the URLs of their routes:
// unique on the server, derived from a project's name when it is created
// (decoy.Slugify), with "-2", "-3", … appended while taken
// (decoy.SlugCandidate).

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
// the index of slugs (SQLite compares text byte by byte, and '.' follows
// '-'). It runs under writeMu, in the transaction that stores the slug.
func freeSlug(ctx context.Context, q queryer, name string) (string, error) {
	base := decoy.Slugify(name)
	rows, err := q.QueryContext(ctx, `SELECT slug FROM projects WHERE slug = ? OR (slug > ? AND slug < ?)`, base, base+"-", base+".")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	taken := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		taken[s] = true
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return firstFreeSlug(name, taken)
}

// projectSlug returns the slug a new project gets: p.Slug when set,
// ErrSlugTaken when another project has it, else one derived from its
// name.
func projectSlug(ctx context.Context, q queryer, p *decoy.Project) (string, error) {
	if p.Slug == "" {
		return freeSlug(ctx, q, p.Name)
	}
	if !decoy.ValidSlug(p.Slug) {
		return "", decoy.Errorf(decoy.EINVALID, "Invalid slug")
	}
	if taken, err := exists(ctx, q, `SELECT 1 FROM projects WHERE slug = ?`, p.Slug); err != nil {
		return "", err
	} else if taken {
		return "", decoy.ErrSlugTaken
	}
	return p.Slug, nil
}

// deriveSlugs is the migration that gives every project of a database
// made before slugs its slug, from its name, in creation order: the
// default project of the default workspace first, so that it has
// "default" (every workspace has a project named so; the others become
// default-2, default-3, …).
func deriveSlugs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, slug FROM projects ORDER BY id = ? DESC, seq`, decoy.DefaultProjectID)
	if err != nil {
		return err
	}
	type project struct{ id, name string }
	var todo []project
	taken := map[string]bool{}
	for rows.Next() {
		var p project
		var slug string
		if err := rows.Scan(&p.id, &p.name, &slug); err != nil {
			rows.Close()
			return err
		}
		if slug != "" {
			taken[slug] = true
		} else {
			todo = append(todo, p)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range todo {
		slug, err := firstFreeSlug(p.name, taken)
		if err != nil {
			return err
		}
		taken[slug] = true
		if _, err := tx.ExecContext(ctx, `UPDATE projects SET slug = ? WHERE id = ?`, slug, p.id); err != nil {
			return err
		}
	}
	return nil
}

// FindProjectBySlug returns the project of a slug.
func (db *DB) FindProjectBySlug(ctx context.Context, slug string) (*decoy.Project, error) {
	p, err := scanProject(db.reads.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE slug = ?`, slug))
	return p, classify(err)
}

// SetProjectSlug changes a project's slug, a change of its routes' URLs:
// its routes_version advances.
func (db *DB) SetProjectSlug(ctx context.Context, projectID, slug string) (*decoy.Project, error) {
	if !decoy.ValidSlug(slug) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid slug")
	}
	var p *decoy.Project
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ?`, projectID); err != nil {
			return err
		} else if !ok {
			return projectNotFound()
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE slug = ? AND id <> ?`, slug, projectID); err != nil {
			return err
		} else if taken {
			return decoy.ErrSlugTaken
		}
		p, err = scanProject(tx.QueryRowContext(ctx, `UPDATE projects SET slug = ?, routes_version = routes_version + 1
			WHERE id = ? RETURNING `+projectColumns, slug, projectID))
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
