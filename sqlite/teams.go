package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/google/uuid"
)

// This file keeps teams (§6 of the contract): users, workspaces, members,
// projects, API keys and the audit log, and the workspace limits that
// creating a mock and replacing its data obey.
//
// Every write runs under writeMu on the one write connection, so a check
// and the write it allows (a limit, the last owner, an empty project) see
// no other write between them: they are exact under concurrency.

var _ decoy.TeamStore = (*DB)(nil)

func userNotFound() error      { return decoy.Errorf(decoy.ENOTFOUND, "User not found") }
func workspaceNotFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Workspace not found") }
func projectNotFound() error   { return decoy.Errorf(decoy.ENOTFOUND, "Project not found") }
func keyNotFound() error       { return decoy.Errorf(decoy.ENOTFOUND, "Key not found") }
func tokenNotFound() error     { return decoy.Errorf(decoy.ENOTFOUND, "Access token not found") }
func invitationNotFound() error {
	return decoy.Errorf(decoy.ENOTFOUND, "Invitation not found")
}

// queryer is what both *sql.DB and *sql.Tx offer.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// write runs fn in a transaction on the write connection, under writeMu.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func nullMillis(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func timePtr(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := fromMillis(ms.Int64)
	return &t
}

func int64Ptr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// parseSeq parses a cursor: the decimal seq of the last row of the
// previous page, in its one canonical form.
func parseSeq(cursor string) (int64, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != cursor {
		return 0, decoy.Errorf(decoy.EINVALID, "Invalid cursor")
	}
	return n, nil
}

// pageLimit checks a page size and caps it at decoy.MaxPage.
func pageLimit(limit int) (int, error) {
	if limit < 1 {
		return 0, decoy.Errorf(decoy.EINVALID, "limit must be 1 or more")
	}
	return min(limit, decoy.MaxPage), nil
}

func exists(ctx context.Context, q queryer, query string, args ...any) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT EXISTS (`+query+`)`, args...).Scan(&n)
	return n == 1, err
}

func count(ctx context.Context, q queryer, query string, args ...any) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// Users

const userColumns = `id, email, name, server_admin, password_hash, created_at`

func scanUser(s scanner, extra ...any) (*decoy.User, error) {
	var u decoy.User
	var created int64
	if err := s.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.ServerAdmin, &u.PasswordHash, &created}, extra...)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, userNotFound()
		}
		return nil, err
	}
	u.CreatedAt = fromMillis(created)
	return &u, nil
}

// CreateUser stores a new user.
func (db *DB) CreateUser(ctx context.Context, u *decoy.User) (*decoy.User, error) {
	var created *decoy.User
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		created, err = insertUser(ctx, tx, u, db.Now())
		return err
	})
	return created, err
}

// insertUser stores u, filling in its id and time when empty.
func insertUser(ctx context.Context, tx *sql.Tx, u *decoy.User, now time.Time) (*decoy.User, error) {
	key := decoy.EmailKey(u.Email)
	if taken, err := exists(ctx, tx, `SELECT 1 FROM users WHERE email_key = ?`, key); err != nil {
		return nil, err
	} else if taken {
		return nil, decoy.ErrEmailTaken
	}
	id, created := u.ID, u.CreatedAt
	if id == "" {
		id = uuid.NewString()
	}
	if created.IsZero() {
		created = now
	}
	return scanUser(tx.QueryRowContext(ctx, `
		INSERT INTO users (id, email, email_key, name, server_admin, password_hash, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+userColumns,
		id, u.Email, key, u.Name, u.ServerAdmin, u.PasswordHash, millis(created)))
}

// FindUser returns a user.
func (db *DB) FindUser(ctx context.Context, id string) (*decoy.User, error) {
	u, err := scanUser(db.reads.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	return u, classify(err)
}

// FindUserByEmail returns the user of an email, in any case.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*decoy.User, error) {
	u, err := scanUser(db.reads.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = ?`, decoy.EmailKey(email)))
	return u, classify(err)
}

// ListUsers returns a page of users in creation order.
func (db *DB) ListUsers(ctx context.Context, cursor string, limit int) ([]*decoy.User, string, error) {
	after, err := parseSeq(cursor)
	if err != nil {
		return nil, "", err
	}
	if limit, err = pageLimit(limit); err != nil {
		return nil, "", err
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+userColumns+`, seq FROM users WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	return readPage(rows, limit, func(s scanner, seq *int64) (*decoy.User, error) { return scanUser(s, seq) })
}

// UpdateUser applies upd to a user; a new password ends its Studio
// sessions and revokes its access tokens.
func (db *DB) UpdateUser(ctx context.Context, id string, upd decoy.UserUpdate) (*decoy.User, error) {
	sets := []string{"id = id"}
	var args []any
	if upd.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, *upd.Name)
	}
	if upd.PasswordHash != nil {
		sets, args = append(sets, "password_hash = ?"), append(args, *upd.PasswordHash)
	}
	if upd.ServerAdmin != nil {
		sets, args = append(sets, "server_admin = ?"), append(args, *upd.ServerAdmin)
	}
	where, wargs := "id = ?", []any{id}
	if upd.IfPasswordHash != nil {
		where, wargs = where+" AND password_hash = ?", append(wargs, *upd.IfPasswordHash)
	}
	var u *decoy.User
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		u, err = scanUser(tx.QueryRowContext(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+` WHERE `+where+` RETURNING `+userColumns, append(args, wargs...)...))
		if decoy.ErrorCode(err) == decoy.ENOTFOUND && upd.IfPasswordHash != nil {
			if n, cerr := count(ctx, tx, `SELECT COUNT(*) FROM users WHERE id = ?`, id); cerr != nil {
				return cerr
			} else if n > 0 {
				return decoy.ErrPasswordChanged
			}
		}
		if err != nil || upd.PasswordHash == nil {
			return err
		}
		// A new password signs the user out of the Studio, and revokes
		// the tokens given for the old one.
		if _, err := tx.ExecContext(ctx, `DELETE FROM studio_sessions WHERE user_id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM access_tokens WHERE user_id = ?`, id)
		return err
	})
	return u, err
}

// soleOwnerQuery counts the workspaces where user ? is the only owner.
const soleOwnerQuery = `SELECT COUNT(*) FROM members m WHERE m.user_id = ? AND m.role = 'owner'
	AND NOT EXISTS (SELECT 1 FROM members o WHERE o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.user_id <> m.user_id)`

// DeleteUser removes a user with its memberships and tokens.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if n, err := count(ctx, tx, soleOwnerQuery, id); err != nil {
			return err
		} else if n > 0 {
			return decoy.ErrLastOwner
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return userNotFound()
		}
		return nil
	})
}

// Access tokens

const tokenColumns = `id, name, user_id, created_at, expires_at, last_used_at, hash`

func scanToken(s scanner, extra ...any) (*decoy.AccessToken, error) {
	var t decoy.AccessToken
	var created, expires int64
	var used sql.NullInt64
	if err := s.Scan(append([]any{&t.ID, &t.Name, &t.UserID, &created, &expires, &used, &t.Hash}, extra...)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, tokenNotFound()
		}
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMillis(created), fromMillis(expires), timePtr(used)
	return &t, nil
}

// CreateAccessToken stores a token, unless the password it was asked for
// with changed meanwhile. Expired tokens go, and the user's oldest past
// decoy.MaxAccessTokens.
func (db *DB) CreateAccessToken(ctx context.Context, t *decoy.AccessToken) error {
	id := t.ID
	if id == "" {
		id = uuid.NewString()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		var current []byte
		if err := tx.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, t.UserID).Scan(&current); errors.Is(err, sql.ErrNoRows) {
			return userNotFound()
		} else if err != nil {
			return err
		}
		if t.PasswordHash != nil && !bytes.Equal(current, t.PasswordHash) {
			return decoy.ErrPasswordChanged
		}
		// Expired by the caller's clock, as invitations (CreateInvitation).
		if _, err := tx.ExecContext(ctx, `DELETE FROM access_tokens WHERE expires_at <= ?`, millis(t.CreatedAt)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `
			DELETE FROM access_tokens WHERE hash IN (SELECT hash FROM access_tokens WHERE user_id = ?
				ORDER BY created_at DESC LIMIT -1 OFFSET ?)`, t.UserID, decoy.MaxAccessTokens-1); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO access_tokens (id, name, hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			id, t.Name, t.Hash, t.UserID, millis(t.CreatedAt), millis(t.ExpiresAt))
		return err
	})
	if err == nil {
		t.ID = id
	}
	return err
}

// FindAccessToken returns an unexpired token and its user.
func (db *DB) FindAccessToken(ctx context.Context, hash []byte, now time.Time) (*decoy.AccessToken, *decoy.User, error) {
	var u decoy.User
	var created int64
	t, err := scanToken(db.reads.QueryRowContext(ctx, `
		SELECT t.id, t.name, t.user_id, t.created_at, t.expires_at, t.last_used_at, t.hash,
			u.id, u.email, u.name, u.server_admin, u.password_hash, u.created_at
		FROM access_tokens t JOIN users u ON u.id = t.user_id
		WHERE t.hash = ? AND t.expires_at > ?`, hash, millis(now)),
		&u.ID, &u.Email, &u.Name, &u.ServerAdmin, &u.PasswordHash, &created)
	if err != nil {
		return nil, nil, classify(err)
	}
	u.CreatedAt = fromMillis(created)
	return t, &u, nil
}

// DeleteAccessToken revokes a token.
func (db *DB) DeleteAccessToken(ctx context.Context, hash []byte) (*decoy.AccessToken, error) {
	var t *decoy.AccessToken
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		t, err = scanToken(tx.QueryRowContext(ctx, `DELETE FROM access_tokens WHERE hash = ? RETURNING `+tokenColumns, hash))
		return err
	})
	return t, err
}

// ListAccessTokens returns a user's unexpired tokens, newest first.
func (db *DB) ListAccessTokens(ctx context.Context, userID string, now time.Time) (_ []*decoy.AccessToken, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM users WHERE id = ?`, userID); err != nil {
		return nil, err
	} else if !ok {
		return nil, userNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+tokenColumns+` FROM access_tokens WHERE user_id = ? AND expires_at > ?
		ORDER BY created_at DESC, id LIMIT ?`, userID, millis(now), decoy.MaxAccessTokens)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ts []*decoy.AccessToken
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// RevokeAccessToken revokes a user's token by id.
func (db *DB) RevokeAccessToken(ctx context.Context, userID, id string) (*decoy.AccessToken, error) {
	var t *decoy.AccessToken
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		t, err = scanToken(tx.QueryRowContext(ctx, `DELETE FROM access_tokens WHERE user_id = ? AND id = ? RETURNING `+tokenColumns, userID, id))
		return err
	})
	return t, err
}

// TouchAccessTokens records tokens' last use in one transaction; a time
// never goes back.
func (db *DB) TouchAccessTokens(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE access_tokens SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for id, at := range used {
			if _, err := stmt.ExecContext(ctx, millis(at), id); err != nil {
				return err
			}
		}
		return nil
	})
}

// Workspaces

const workspaceColumns = `id, name, max_mocks, max_bytes, monthly_reads, created_at`

func scanWorkspace(s scanner) (*decoy.Workspace, error) {
	var w decoy.Workspace
	var mocks, bytes, reads sql.NullInt64
	var created int64
	if err := s.Scan(&w.ID, &w.Name, &mocks, &bytes, &reads, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, workspaceNotFound()
		}
		return nil, err
	}
	w.Limits = decoy.WorkspaceLimits{MaxMocks: int64Ptr(mocks), MaxBytes: int64Ptr(bytes), MonthlyReads: int64Ptr(reads)}
	w.CreatedAt = fromMillis(created)
	return &w, nil
}

func scanWorkspaces(rows *sql.Rows, err error) ([]*decoy.Workspace, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ws []*decoy.Workspace
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, rows.Err()
}

// CreateWorkspace stores a workspace, its default project and its owner.
func (db *DB) CreateWorkspace(ctx context.Context, w *decoy.Workspace, ownerID string) (*decoy.Workspace, error) {
	var created *decoy.Workspace
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		id, at := w.ID, w.CreatedAt
		if id == "" {
			id = uuid.NewString()
		}
		if at.IsZero() {
			at = db.Now()
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = ?`, id); err != nil {
			return err
		} else if taken {
			return decoy.Errorf(decoy.ECONFLICT, "A workspace with id %s already exists", id)
		}
		l := w.Limits
		created, err = scanWorkspace(tx.QueryRowContext(ctx, `
			INSERT INTO workspaces (id, name, max_mocks, max_bytes, monthly_reads, created_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING `+workspaceColumns,
			id, w.Name, nullable(l.MaxMocks), nullable(l.MaxBytes), nullable(l.MonthlyReads), millis(at)))
		if err != nil {
			return err
		}
		slug, err := freeSlug(ctx, tx, decoy.DefaultName)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, slug, created_at) VALUES (?, ?, ?, ?, ?)`,
			uuid.NewString(), id, decoy.DefaultName, slug, millis(at)); err != nil {
			return err
		}
		if ownerID != "" {
			_, err = putMember(ctx, tx, id, ownerID, decoy.RoleOwner)
		}
		return err
	})
	return created, err
}

// FindWorkspace returns a workspace.
func (db *DB) FindWorkspace(ctx context.Context, id string) (*decoy.Workspace, error) {
	w, err := scanWorkspace(db.reads.QueryRowContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, id))
	return w, classify(err)
}

// ListWorkspaces lists every workspace, or a user's, in creation order, at
// most decoy.MaxWorkspaces.
func (db *DB) ListWorkspaces(ctx context.Context, userID string) ([]*decoy.Workspace, error) {
	if userID == "" {
		ws, err := scanWorkspaces(db.reads.QueryContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY seq LIMIT ?`, decoy.MaxWorkspaces))
		return ws, classify(err)
	}
	ws, err := scanWorkspaces(db.reads.QueryContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE id IN (SELECT workspace_id FROM members WHERE user_id = ?) ORDER BY seq LIMIT ?`, userID, decoy.MaxWorkspaces))
	return ws, classify(err)
}

// UpdateWorkspace renames a workspace or sets its limits.
func (db *DB) UpdateWorkspace(ctx context.Context, id string, upd decoy.WorkspaceUpdate) (*decoy.Workspace, error) {
	sets := []string{"id = id"}
	var args []any
	if upd.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, *upd.Name)
	}
	for _, name := range decoy.LimitNames {
		if l, ok := upd.Limits[name]; ok {
			sets, args = append(sets, name+" = ?"), append(args, nullable(l))
		}
	}
	var w *decoy.Workspace
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		w, err = scanWorkspace(tx.QueryRowContext(ctx, `UPDATE workspaces SET `+strings.Join(sets, ", ")+` WHERE id = ? RETURNING `+workspaceColumns, append(args, id)...))
		return err
	})
	return w, err
}

// DeleteWorkspace deletes a workspace's mocks as DeleteMock does, then the
// workspace with everything else it holds.
func (db *DB) DeleteWorkspace(ctx context.Context, id string) ([]string, error) {
	if _, err := db.FindWorkspace(ctx, id); err != nil {
		return nil, err
	}
	deleted, err := db.emptyThenDelete(ctx, `workspace_id = ?`, id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM workspaces WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return deleted, err
	}
	// Its reads went from workspace_reads with it; those in memory go now.
	return deleted, db.forgetCounts(id)
}

// emptyBatch is how many mocks emptyThenDelete looks up at a time.
const emptyBatch = 256

// emptyThenDelete deletes, through DeleteMock, the mocks matching where
// (with its one argument arg), then runs del in a transaction that finds
// no mock left, so that a mock made meanwhile is not orphaned. It returns
// the ids of the mocks it deleted.
func (db *DB) emptyThenDelete(ctx context.Context, where, arg string, del func(tx *sql.Tx) error) ([]string, error) {
	var deleted []string
	for {
		rows, err := db.reads.QueryContext(ctx, `SELECT id FROM mocks WHERE `+where+` ORDER BY seq LIMIT ?`, arg, emptyBatch)
		if err != nil {
			return deleted, classify(err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return deleted, classify(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return deleted, classify(err)
		}
		for _, id := range ids {
			if err := db.DeleteMock(ctx, id); err != nil && decoy.ErrorCode(err) != decoy.ENOTFOUND {
				return deleted, err
			}
			deleted = append(deleted, id)
		}
		if len(ids) > 0 {
			continue
		}
		errLeft := errors.New("mocks left")
		err = db.write(ctx, func(tx *sql.Tx) error {
			if left, err := exists(ctx, tx, `SELECT 1 FROM mocks WHERE `+where, arg); err != nil {
				return err
			} else if left {
				return errLeft
			}
			return del(tx)
		})
		if !errors.Is(err, errLeft) {
			return deleted, err
		}
	}
}

// WorkspaceUsage returns how many mocks a workspace holds and their bytes.
func (db *DB) WorkspaceUsage(ctx context.Context, id string) (mocks, bytes int64, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM workspaces WHERE id = ?`, id); err != nil {
		return 0, 0, err
	} else if !ok {
		return 0, 0, workspaceNotFound()
	}
	if mocks, err = count(ctx, db.reads, `SELECT COUNT(*) FROM mocks WHERE workspace_id = ?`, id); err != nil {
		return 0, 0, err
	}
	bytes, err = workspaceBytes(ctx, db.reads, id)
	return mocks, bytes, err
}

// workspaceBytes is the bytes of data a workspace holds, what its max_bytes
// limits: the sizes of its mocks' kept versions, the current data
// included (§9), and of their live data apart from it (§12.2; see
// decoy.LiveStore).
func workspaceBytes(ctx context.Context, q queryer, workspaceID string) (int64, error) {
	return count(ctx, q, `SELECT COALESCE((SELECT SUM(v.size) FROM mock_versions v JOIN mocks m ON m.id = v.mock_id
		WHERE m.workspace_id = ?), 0) + COALESCE((SELECT SUM(live_size) FROM mocks WHERE workspace_id = ?), 0)`, workspaceID, workspaceID)
}

// checkLimits refuses to add mocks and bytes to a workspace past its
// limits. A write that does not grow a dimension passes it, even over the
// limit (a limit lowered below what the workspace holds). It runs under
// writeMu, before the write it checks (see growth).
func checkLimits(ctx context.Context, q queryer, workspaceID string, addMocks, addBytes int64) error {
	var maxMocks, maxBytes sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT max_mocks, max_bytes FROM workspaces WHERE id = ?`, workspaceID).Scan(&maxMocks, &maxBytes); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return workspaceNotFound()
		}
		return err
	}
	if maxMocks.Valid && addMocks > 0 {
		n, err := count(ctx, q, `SELECT COUNT(*) FROM mocks WHERE workspace_id = ?`, workspaceID)
		if err != nil {
			return err
		}
		if n+addMocks > maxMocks.Int64 {
			return decoy.LimitError("max_mocks")
		}
	}
	if maxBytes.Valid && addBytes > 0 {
		n, err := workspaceBytes(ctx, q, workspaceID)
		if err != nil {
			return err
		}
		if n+addBytes > maxBytes.Int64 {
			return decoy.LimitError("max_bytes")
		}
	}
	return nil
}

// placeMock returns the workspace and project of a new mock: its project,
// the default one when m.ProjectID is empty.
func placeMock(ctx context.Context, q queryer, m *decoy.Mock) (workspaceID, projectID string, err error) {
	projectID = m.ProjectID
	if projectID == "" {
		projectID = decoy.DefaultProjectID
	}
	err = q.QueryRowContext(ctx, `SELECT workspace_id FROM projects WHERE id = ?`, projectID).Scan(&workspaceID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", projectNotFound()
	}
	return workspaceID, projectID, err
}

// Members

// ListMembers lists a workspace's members, owners first, then by email.
func (db *DB) ListMembers(ctx context.Context, workspaceID string) (_ []*decoy.Member, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `
		SELECT u.id, u.email, u.name, m.role FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = ?
		ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, u.email_key LIMIT ?`, workspaceID, decoy.MaxMembers)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []*decoy.Member
	for rows.Next() {
		var m decoy.Member
		if err := rows.Scan(&m.UserID, &m.Email, &m.Name, &m.Role); err != nil {
			return nil, err
		}
		ms = append(ms, &m)
	}
	return ms, rows.Err()
}

// MemberRole returns a user's role in a workspace.
func (db *DB) MemberRole(ctx context.Context, workspaceID, userID string) (decoy.Role, error) {
	var role decoy.Role
	err := db.reads.QueryRowContext(ctx, `SELECT role FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", workspaceNotFound()
	}
	return role, classify(err)
}

// PutMember adds a member or changes its role.
func (db *DB) PutMember(ctx context.Context, workspaceID, userID string, role decoy.Role) (*decoy.Member, error) {
	var m *decoy.Member
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		m, err = putMember(ctx, tx, workspaceID, userID, role)
		return err
	})
	return m, err
}

func putMember(ctx context.Context, tx *sql.Tx, workspaceID, userID string, role decoy.Role) (*decoy.Member, error) {
	if !role.Valid() {
		return nil, decoy.Errorf(decoy.EINVALID, "role must be owner, editor or viewer")
	}
	if ok, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	var m decoy.Member
	if err := tx.QueryRowContext(ctx, `SELECT id, email, name FROM users WHERE id = ?`, userID).Scan(&m.UserID, &m.Email, &m.Name); errors.Is(err, sql.ErrNoRows) {
		return nil, userNotFound()
	} else if err != nil {
		return nil, err
	}
	m.Role = role
	var old decoy.Role
	err := tx.QueryRowContext(ctx, `SELECT role FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&old)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := checkMemberBounds(ctx, tx, workspaceID, userID); err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO members (workspace_id, user_id, role) VALUES (?, ?, ?)`, workspaceID, userID, role)
		return &m, err
	case err != nil:
		return nil, err
	}
	if old == decoy.RoleOwner && role != decoy.RoleOwner {
		if err := keepOwner(ctx, tx, workspaceID, userID); err != nil {
			return nil, err
		}
	}
	m.Previous = old
	_, err = tx.ExecContext(ctx, `UPDATE members SET role = ? WHERE workspace_id = ? AND user_id = ?`, role, workspaceID, userID)
	return &m, err
}

// checkMemberBounds refuses a new member past decoy.MaxMembers, counting
// pending invitations, or a user's membership past it.
func checkMemberBounds(ctx context.Context, q queryer, workspaceID, userID string) error {
	n, err := count(ctx, q, `SELECT (SELECT COUNT(*) FROM members WHERE workspace_id = ?) + (SELECT COUNT(*) FROM invitations WHERE workspace_id = ?)`, workspaceID, workspaceID)
	if err != nil {
		return err
	}
	if n >= decoy.MaxMembers {
		return decoy.Errorf(decoy.EINVALID, "A workspace has at most %d members and invitations", decoy.MaxMembers)
	}
	if userID == "" {
		return nil
	}
	if n, err = count(ctx, q, `SELECT COUNT(*) FROM members WHERE user_id = ?`, userID); err != nil {
		return err
	}
	if n >= decoy.MaxMembers {
		return decoy.Errorf(decoy.EINVALID, "A user is a member of at most %d workspaces", decoy.MaxMembers)
	}
	return nil
}

// keepOwner returns ErrLastOwner when userID is the only owner of the
// workspace.
func keepOwner(ctx context.Context, q queryer, workspaceID, userID string) error {
	other, err := exists(ctx, q, `SELECT 1 FROM members WHERE workspace_id = ? AND role = 'owner' AND user_id <> ?`, workspaceID, userID)
	if err != nil {
		return err
	}
	if !other {
		return decoy.ErrLastOwner
	}
	return nil
}

// RemoveMember removes a member.
func (db *DB) RemoveMember(ctx context.Context, workspaceID, userID string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var role decoy.Role
		err := tx.QueryRowContext(ctx, `SELECT role FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&role)
		if errors.Is(err, sql.ErrNoRows) {
			return userNotFound()
		}
		if err != nil {
			return err
		}
		if role == decoy.RoleOwner {
			if err := keepOwner(ctx, tx, workspaceID, userID); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID)
		return err
	})
}

// Memberships lists the workspaces of a user with its role in each.
func (db *DB) Memberships(ctx context.Context, userID string) (_ []decoy.Membership, err error) {
	defer func() { err = classify(err) }()
	rows, err := db.reads.QueryContext(ctx, `
		SELECT w.id, w.name, w.max_mocks, w.max_bytes, w.monthly_reads, w.created_at, m.role
		FROM members m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = ? ORDER BY w.seq LIMIT ?`, userID, decoy.MaxMembers)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []decoy.Membership
	for rows.Next() {
		var role decoy.Role
		w, err := scanWorkspace(rowWith{rows, &role})
		if err != nil {
			return nil, err
		}
		ms = append(ms, decoy.Membership{Workspace: *w, Role: role})
	}
	return ms, rows.Err()
}

// rowWith scans extra columns after those a scan function knows.
type rowWith struct {
	s     scanner
	extra any
}

func (r rowWith) Scan(dest ...any) error { return r.s.Scan(append(dest, r.extra)...) }

// Invitations

// CreateInvitation stores an invitation, replacing any pending one of the
// same email to the same workspace; expired ones go.
func (db *DB) CreateInvitation(ctx context.Context, inv *decoy.Invitation) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if !inv.Role.Valid() {
			return decoy.Errorf(decoy.EINVALID, "role must be owner, editor or viewer")
		}
		if ok, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = ?`, inv.WorkspaceID); err != nil {
			return err
		} else if !ok {
			return workspaceNotFound()
		}
		key := decoy.EmailKey(inv.Email)
		// Expired as of the invitation's making: the caller's clock, by
		// which it lists and accepts them too (this process's was used,
		// and an invitation of a server whose clock ran apart went).
		if _, err := tx.ExecContext(ctx, `DELETE FROM invitations WHERE expires_at <= ? OR (workspace_id = ? AND email_key = ?)`,
			millis(inv.CreatedAt), inv.WorkspaceID, key); err != nil {
			return err
		}
		if err := checkMemberBounds(ctx, tx, inv.WorkspaceID, ""); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO invitations (hash, workspace_id, email, email_key, role, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			inv.Hash, inv.WorkspaceID, inv.Email, key, inv.Role, millis(inv.CreatedAt), millis(inv.ExpiresAt))
		return err
	})
}

const invitationColumns = `hash, workspace_id, email, role, created_at, expires_at`

func scanInvitation(s scanner) (*decoy.Invitation, error) {
	var inv decoy.Invitation
	var created, expires int64
	if err := s.Scan(&inv.Hash, &inv.WorkspaceID, &inv.Email, &inv.Role, &created, &expires); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, invitationNotFound()
		}
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = fromMillis(created), fromMillis(expires)
	return &inv, nil
}

// FindInvitation returns an unexpired invitation.
func (db *DB) FindInvitation(ctx context.Context, hash []byte, now time.Time) (*decoy.Invitation, error) {
	inv, err := scanInvitation(db.reads.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE hash = ? AND expires_at > ?`, hash, millis(now)))
	return inv, classify(err)
}

// ListInvitations lists a workspace's pending invitations, oldest first.
func (db *DB) ListInvitations(ctx context.Context, workspaceID string, now time.Time) (_ []*decoy.Invitation, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE workspace_id = ? AND expires_at > ? ORDER BY created_at, email_key LIMIT ?`, workspaceID, millis(now), decoy.MaxMembers)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var invs []*decoy.Invitation
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		invs = append(invs, inv)
	}
	return invs, rows.Err()
}

// RevokeInvitation deletes the pending invitation of an email.
func (db *DB) RevokeInvitation(ctx context.Context, workspaceID, email string, now time.Time) (*decoy.Invitation, error) {
	var inv *decoy.Invitation
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		inv, err = scanInvitation(tx.QueryRowContext(ctx, `DELETE FROM invitations WHERE workspace_id = ? AND email_key = ? AND expires_at > ? RETURNING `+invitationColumns,
			workspaceID, decoy.EmailKey(email), millis(now)))
		return err
	})
	return inv, err
}

// AcceptInvitation uses an invitation once.
func (db *DB) AcceptInvitation(ctx context.Context, hash []byte, now time.Time, u *decoy.User) (*decoy.User, error) {
	var user *decoy.User
	err := db.write(ctx, func(tx *sql.Tx) error {
		inv, err := scanInvitation(tx.QueryRowContext(ctx, `DELETE FROM invitations WHERE hash = ? AND expires_at > ? RETURNING `+invitationColumns, hash, millis(now)))
		if err != nil {
			return err
		}
		// An invitation makes a new user only: accepting it never acts
		// as an account made since (its secret would then sign anyone in
		// as that account). The transaction is undone, and the invitation
		// stays unused.
		_, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = ?`, decoy.EmailKey(inv.Email)))
		switch {
		case err == nil:
			return decoy.ErrEmailTaken
		case decoy.ErrorCode(err) != decoy.ENOTFOUND:
			return err
		}
		nu := *u
		nu.Email = inv.Email
		if user, err = insertUser(ctx, tx, &nu, now); err != nil {
			return err
		}
		return joinWorkspace(ctx, tx, inv.WorkspaceID, user.ID, inv.Role)
	})
	return user, err
}

// joinWorkspace makes a user a member with role, or raises its role to it.
func joinWorkspace(ctx context.Context, tx *sql.Tx, workspaceID, userID string, role decoy.Role) error {
	old, err := memberRole(ctx, tx, workspaceID, userID)
	if err != nil {
		return err
	}
	if old.Allows(role) {
		return nil
	}
	_, err = putMember(ctx, tx, workspaceID, userID, role)
	return err
}

// memberRole is a user's role in a workspace, "" when not a member.
func memberRole(ctx context.Context, q queryer, workspaceID, userID string) (decoy.Role, error) {
	var role decoy.Role
	err := q.QueryRowContext(ctx, `SELECT role FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return role, err
}

// Projects

const projectColumns = `id, workspace_id, name, slug, upstream, mode, routes_version, created_at`

func scanProject(s scanner) (*decoy.Project, error) {
	var p decoy.Project
	var created int64
	if err := s.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.Slug, &p.Upstream, &p.Mode, &p.RoutesVersion, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, projectNotFound()
		}
		return nil, err
	}
	p.CreatedAt = fromMillis(created)
	return &p, nil
}

func projectNameTaken() error {
	return decoy.Errorf(decoy.ECONFLICT, "A project with this name exists in the workspace")
}

// CreateProject stores a project, with its slug or one derived from its
// name.
func (db *DB) CreateProject(ctx context.Context, p *decoy.Project) (*decoy.Project, error) {
	var created *decoy.Project
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = ?`, p.WorkspaceID); err != nil {
			return err
		} else if !ok {
			return workspaceNotFound()
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM projects WHERE workspace_id = ?`, p.WorkspaceID); err != nil {
			return err
		} else if n >= decoy.MaxProjects {
			return decoy.Errorf(decoy.EINVALID, "A workspace has at most %d projects", decoy.MaxProjects)
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE workspace_id = ? AND name = ?`, p.WorkspaceID, p.Name); err != nil {
			return err
		} else if taken {
			return projectNameTaken()
		}
		id, at := p.ID, p.CreatedAt
		if id == "" {
			id = uuid.NewString()
		}
		if at.IsZero() {
			at = db.Now()
		}
		if taken, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ?`, id); err != nil {
			return err
		} else if taken {
			return decoy.Errorf(decoy.ECONFLICT, "A project with id %s already exists", id)
		}
		slug, err := projectSlug(ctx, tx, p)
		if err != nil {
			return err
		}
		created, err = scanProject(tx.QueryRowContext(ctx, `INSERT INTO projects (id, workspace_id, name, slug, created_at) VALUES (?, ?, ?, ?, ?) RETURNING `+projectColumns,
			id, p.WorkspaceID, p.Name, slug, millis(at)))
		return err
	})
	return created, err
}

// FindProject returns a project.
func (db *DB) FindProject(ctx context.Context, id string) (*decoy.Project, error) {
	p, err := scanProject(db.reads.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	return p, classify(err)
}

// ListProjects lists a workspace's projects in creation order.
func (db *DB) ListProjects(ctx context.Context, workspaceID string) (_ []*decoy.Project, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE workspace_id = ? ORDER BY seq LIMIT ?`, workspaceID, decoy.MaxProjects)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []*decoy.Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// RenameProject renames a project.
func (db *DB) RenameProject(ctx context.Context, id, name string) (*decoy.Project, error) {
	var p *decoy.Project
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		if taken, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE name = ? AND id <> ? AND workspace_id = (SELECT workspace_id FROM projects WHERE id = ?)`, name, id, id); err != nil {
			return err
		} else if taken {
			return projectNameTaken()
		}
		p, err = scanProject(tx.QueryRowContext(ctx, `UPDATE projects SET name = ? WHERE id = ? RETURNING `+projectColumns, name, id))
		return err
	})
	return p, err
}

// DeleteProject deletes an empty project, or with cascade its mocks first
// (as DeleteMock does).
func (db *DB) DeleteProject(ctx context.Context, id string, cascade bool) ([]string, error) {
	if _, err := db.FindProject(ctx, id); err != nil {
		return nil, err
	}
	del := func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM projects WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return projectNotFound()
		}
		return nil
	}
	if cascade {
		return db.emptyThenDelete(ctx, `project_id = ?`, id, del)
	}
	return nil, db.write(ctx, func(tx *sql.Tx) error {
		if full, err := exists(ctx, tx, `SELECT 1 FROM mocks WHERE project_id = ?`, id); err != nil {
			return err
		} else if full {
			return decoy.ErrProjectNotEmpty
		}
		return del(tx)
	})
}

// API keys

const keyColumns = `id, name, workspace_id, role, project_id, expires_at, created_at, last_used_at, hash`

func scanKey(s scanner) (*decoy.APIKey, error) {
	var k decoy.APIKey
	var project sql.NullString
	var expires, used sql.NullInt64
	var created int64
	if err := s.Scan(&k.ID, &k.Name, &k.WorkspaceID, &k.Role, &project, &expires, &created, &used, &k.Hash); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, keyNotFound()
		}
		return nil, err
	}
	if project.Valid {
		k.ProjectID = &project.String
	}
	k.ExpiresAt, k.LastUsedAt = timePtr(expires), timePtr(used)
	k.CreatedAt = fromMillis(created)
	return &k, nil
}

// CreateKey stores a key. Past decoy.MaxKeys keys in the workspace, the
// revoked ones go; past it unrevoked, it is refused.
func (db *DB) CreateKey(ctx context.Context, k *decoy.APIKey) (*decoy.APIKey, error) {
	if k.Role != decoy.RoleEditor && k.Role != decoy.RoleViewer {
		return nil, decoy.Errorf(decoy.EINVALID, "role must be editor or viewer")
	}
	var created *decoy.APIKey
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = ?`, k.WorkspaceID); err != nil {
			return err
		} else if !ok {
			return workspaceNotFound()
		}
		var project any
		if k.ProjectID != nil {
			if ok, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = ? AND workspace_id = ?`, *k.ProjectID, k.WorkspaceID); err != nil {
				return err
			} else if !ok {
				return projectNotFound()
			}
			project = *k.ProjectID
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?`, k.WorkspaceID); err != nil {
			return err
		} else if n >= decoy.MaxKeys {
			if _, err := tx.ExecContext(ctx, `DELETE FROM api_keys WHERE workspace_id = ? AND revoked_at IS NOT NULL`, k.WorkspaceID); err != nil {
				return err
			}
			if n, err := count(ctx, tx, `SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?`, k.WorkspaceID); err != nil {
				return err
			} else if n >= decoy.MaxKeys {
				return decoy.Errorf(decoy.EINVALID, "A workspace has at most %d keys", decoy.MaxKeys)
			}
		}
		id, at := k.ID, k.CreatedAt
		if id == "" {
			id = uuid.NewString()
		}
		if at.IsZero() {
			at = db.Now()
		}
		created, err = scanKey(tx.QueryRowContext(ctx, `
			INSERT INTO api_keys (id, name, workspace_id, role, project_id, expires_at, created_at, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+keyColumns,
			id, k.Name, k.WorkspaceID, k.Role, project, nullMillis(k.ExpiresAt), millis(at), k.Hash))
		if err != nil && strings.Contains(err.Error(), "UNIQUE") {
			return decoy.Errorf(decoy.ECONFLICT, "A key with this id or secret exists")
		}
		return err
	})
	return created, err
}

// ListKeys lists a workspace's unrevoked keys in creation order.
func (db *DB) ListKeys(ctx context.Context, workspaceID string) (_ []*decoy.APIKey, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.reads, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY seq LIMIT ?`, workspaceID, decoy.MaxKeys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ks []*decoy.APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	return ks, rows.Err()
}

// FindKey returns the unrevoked key of a secret's hash.
func (db *DB) FindKey(ctx context.Context, hash []byte) (*decoy.APIKey, error) {
	k, err := scanKey(db.reads.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ? AND revoked_at IS NULL`, hash))
	return k, classify(err)
}

// RevokeKey revokes a key of a workspace.
func (db *DB) RevokeKey(ctx context.Context, workspaceID, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL`, db.now(), workspaceID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return keyNotFound()
		}
		return nil
	})
}

// TouchKeys records keys' last use in one transaction; a time never goes
// back.
func (db *DB) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE id = ?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for id, at := range used {
			if _, err := stmt.ExecContext(ctx, millis(at), id); err != nil {
				return err
			}
		}
		return nil
	})
}

// Audit log

// Audit entries past auditKeep of a workspace go, on average, once every
// auditPruneEvery entries appended, so that appending costs a walk of the
// index that rarely. Tests lower them. The turn is drawn at random, not
// taken from the global sequence: a workspace whose appends never landed
// on one of its turns (two workspaces taking turns) was never pruned.
var (
	auditKeep       int64 = decoy.MaxAuditEntries
	auditPruneEvery int64 = 1024
)

// pruneTurn reports whether an append prunes its workspace's log.
func pruneTurn() bool { return rand.Int64N(auditPruneEvery) == 0 }

// AppendAudit records a change.
func (db *DB) AppendAudit(ctx context.Context, e *decoy.AuditEntry) error {
	var workspace any
	if e.WorkspaceID != "" {
		workspace = e.WorkspaceID
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `
			INSERT INTO audit_log (workspace_id, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, target_name, ip)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
			workspace, millis(e.At), e.Actor.Kind, e.Actor.ID, e.Actor.Label, e.Action, e.Target.Kind, e.Target.ID, e.Target.Name, e.IP).Scan(&seq)
		if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
			return workspaceNotFound()
		}
		if err != nil || !pruneTurn() {
			return err
		}
		// IS matches NULL, the entries of no workspace, too.
		_, err = tx.ExecContext(ctx, `DELETE FROM audit_log WHERE workspace_id IS ? AND seq <=
			(SELECT seq FROM audit_log WHERE workspace_id IS ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, workspace, workspace, auditKeep)
		return err
	})
}

// ListAudit returns a page of a workspace's log, newest first. The cursor
// is the seq of the last entry of the previous page.
func (db *DB) ListAudit(ctx context.Context, workspaceID, cursor string, limit int) (_ []*decoy.AuditEntry, _ string, err error) {
	defer func() { err = classify(err) }()
	before, err := parseSeq(cursor)
	if err != nil {
		return nil, "", err
	}
	if cursor == "" {
		before = 1<<63 - 1
	}
	if limit, err = pageLimit(limit); err != nil {
		return nil, "", err
	}
	rows, err := db.reads.QueryContext(ctx, `
		SELECT seq, workspace_id, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, target_name, ip
		FROM audit_log WHERE workspace_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`, workspaceID, before, limit+1)
	if err != nil {
		return nil, "", err
	}
	return readPage(rows, limit, func(s scanner, seq *int64) (*decoy.AuditEntry, error) {
		var e decoy.AuditEntry
		var at int64
		err := s.Scan(seq, &e.WorkspaceID, &at, &e.Actor.Kind, &e.Actor.ID, &e.Actor.Label, &e.Action,
			&e.Target.Kind, &e.Target.ID, &e.Target.Name, &e.IP)
		e.At = fromMillis(at)
		return &e, err
	})
}

// Search

// SearchMocks returns a page of the mocks f selects, in creation order.
func (db *DB) SearchMocks(ctx context.Context, f decoy.MockFilter, cursor string, limit int) (_ []*decoy.Mock, _ string, err error) {
	defer func() { err = classify(err) }()
	after, err := parseSeq(cursor)
	if err != nil {
		return nil, "", err
	}
	if limit, err = pageLimit(limit); err != nil {
		return nil, "", err
	}
	if f.WorkspaceIDs != nil && len(f.WorkspaceIDs) == 0 {
		return nil, "", nil
	}
	where := []string{"seq > ?"}
	args := []any{after}
	if f.WorkspaceIDs != nil {
		marks := strings.Repeat(",?", len(f.WorkspaceIDs))[1:]
		where = append(where, "workspace_id IN ("+marks+")")
		for _, id := range f.WorkspaceIDs {
			args = append(args, id)
		}
	}
	if f.WorkspaceID != "" {
		where, args = append(where, "workspace_id = ?"), append(args, f.WorkspaceID)
	}
	if f.ProjectID != "" {
		where, args = append(where, "project_id = ?"), append(args, f.ProjectID)
	}
	if f.Q != "" {
		// LIKE is case-insensitive for ASCII letters; ids are lowercase.
		where = append(where, `(name LIKE ? ESCAPE '\' OR id LIKE ? ESCAPE '\')`)
		q := likeEscape(f.Q)
		args = append(args, "%"+q+"%", strings.ToLower(q)+"%")
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+mockColumns+`, seq FROM mocks WHERE `+strings.Join(where, " AND ")+` ORDER BY seq LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	return readPage(rows, limit, scanMockSeq)
}

// likeEscape escapes the wildcards of LIKE, with \ as the escape.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
