package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file keeps teams (§6 of the contract): users, workspaces, members,
// projects, API keys and the audit log, and the workspace limits that
// creating a mock and replacing its data obey.
//
// A write that a rule spanning rows decides (a limit, the last owner, a
// bound on a workspace's projects, keys or members) locks the workspace's
// row first (lockWorkspace) and runs in READ COMMITTED, whatever the
// server's default: each statement after the lock then sees what the
// previous holder committed, so the rule is exact across replicas. FOR NO
// KEY UPDATE does not wait on the KEY SHARE locks that inserting rows
// referencing the workspace takes.

var _ decoy.TeamStore = (*DB)(nil)

// writeTx are the options of transactions that check a rule under
// lockWorkspace.
var writeTx = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

func userNotFound() error      { return decoy.Errorf(decoy.ENOTFOUND, "User not found") }
func workspaceNotFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Workspace not found") }
func projectNotFound() error   { return decoy.Errorf(decoy.ENOTFOUND, "Project not found") }
func keyNotFound() error       { return decoy.Errorf(decoy.ENOTFOUND, "Key not found") }
func tokenNotFound() error     { return decoy.Errorf(decoy.ENOTFOUND, "Access token not found") }
func invitationNotFound() error {
	return decoy.Errorf(decoy.ENOTFOUND, "Invitation not found")
}

// querier is what both the pool and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// write runs fn in a READ COMMITTED transaction.
func (db *DB) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return classify(pgx.BeginTxFunc(ctx, db.pool, writeTx, fn))
}

// pgCode is the SQLSTATE of err, "" when it has none.
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// stamp is a time as stored: UTC, whole milliseconds (see DB.now).
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func stampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
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
		return 0, decoy.Errorf(decoy.EINVALID, "Invalid limit")
	}
	return min(limit, decoy.MaxPage), nil
}

func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (`+query+`)`, args...).Scan(&ok)
	return ok, err
}

func count(ctx context.Context, q querier, query string, args ...any) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}

// lockWorkspace locks a workspace's row until the transaction ends, and
// returns its mock limits; workspaceNotFound when there is none.
func lockWorkspace(ctx context.Context, tx pgx.Tx, id string) (maxMocks, maxBytes *int64, err error) {
	err = tx.QueryRow(ctx, `SELECT max_mocks, max_bytes FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&maxMocks, &maxBytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, workspaceNotFound()
	}
	return maxMocks, maxBytes, err
}

// Users

const userColumns = `id, email, name, server_admin, password_hash, created_at`

func scanUser(s scanner, extra ...any) (*decoy.User, error) {
	var u decoy.User
	if err := s.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.ServerAdmin, &u.PasswordHash, &u.CreatedAt}, extra...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, userNotFound()
		}
		return nil, err
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, nil
}

// CreateUser stores a new user.
func (db *DB) CreateUser(ctx context.Context, u *decoy.User) (*decoy.User, error) {
	var created *decoy.User
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		created, err = insertUser(ctx, tx, u, db.now())
		return err
	})
	return created, err
}

// insertUser stores u, filling in its id and time when empty.
func insertUser(ctx context.Context, tx pgx.Tx, u *decoy.User, now time.Time) (*decoy.User, error) {
	id, created := u.ID, u.CreatedAt
	if id == "" {
		id = uuid.NewString()
	}
	if created.IsZero() {
		created = now
	}
	// A savepoint, so that the transaction goes on after a violation.
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer sp.Rollback(ctx)
	user, err := scanUser(sp.QueryRow(ctx, `
		INSERT INTO users (id, email, email_key, name, server_admin, password_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+userColumns,
		id, u.Email, decoy.EmailKey(u.Email), u.Name, u.ServerAdmin, u.PasswordHash, stamp(created)))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		if pgErr.ConstraintName == "users_email_key_key" {
			return nil, decoy.ErrEmailTaken
		}
		return nil, decoy.Errorf(decoy.ECONFLICT, "A user with id %s already exists", id)
	}
	if err != nil {
		return nil, err
	}
	return user, sp.Commit(ctx)
}

// FindUser returns a user.
func (db *DB) FindUser(ctx context.Context, id string) (*decoy.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return u, classify(err)
}

// FindUserByEmail returns the user of an email, in any case.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*decoy.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = $1`, decoy.EmailKey(email)))
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
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+`, seq FROM users WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit+1)
	if err != nil {
		return nil, "", classify(err)
	}
	users, next, err := readPage(rows, limit, func(s scanner, seq *int64) (*decoy.User, error) { return scanUser(s, seq) })
	return users, next, classify(err)
}

// UpdateUser applies upd to a user; a new password ends its Studio
// sessions and revokes its access tokens. The update locks the user's row,
// which CreateAccessToken locks too: a token asked for with the old
// password is either revoked here or refused there.
func (db *DB) UpdateUser(ctx context.Context, id string, upd decoy.UserUpdate) (*decoy.User, error) {
	sets := []string{"id = id"}
	args := []any{id}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if upd.Name != nil {
		set("name", *upd.Name)
	}
	if upd.PasswordHash != nil {
		set("password_hash", *upd.PasswordHash)
	}
	if upd.ServerAdmin != nil {
		set("server_admin", *upd.ServerAdmin)
	}
	where := "id = $1"
	if upd.IfPasswordHash != nil {
		args = append(args, *upd.IfPasswordHash)
		where += fmt.Sprintf(" AND password_hash = $%d", len(args))
	}
	var u *decoy.User
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		u, err = scanUser(tx.QueryRow(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+` WHERE `+where+` RETURNING `+userColumns, args...))
		if decoy.ErrorCode(err) == decoy.ENOTFOUND && upd.IfPasswordHash != nil {
			if found, cerr := exists(ctx, tx, `SELECT 1 FROM users WHERE id = $1`, id); cerr != nil {
				return cerr
			} else if found {
				return decoy.ErrPasswordChanged
			}
		}
		if err != nil || upd.PasswordHash == nil {
			return err
		}
		// A new password signs the user out of the Studio, and revokes
		// the tokens given for the old one.
		if _, err := tx.Exec(ctx, `DELETE FROM studio_sessions WHERE user_id = $1`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM access_tokens WHERE user_id = $1`, id)
		return err
	})
	return u, err
}

// DeleteUser removes a user with its memberships and tokens, unless it is
// the last owner of a workspace. The user's workspaces are locked in id
// order, so that two deletions never wait on each other.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM workspaces WHERE id IN (SELECT workspace_id FROM members WHERE user_id = $1)
			ORDER BY id FOR NO KEY UPDATE`, id); err != nil {
			return err
		}
		sole, err := exists(ctx, tx, `SELECT 1 FROM members m WHERE m.user_id = $1 AND m.role = 'owner'
			AND NOT EXISTS (SELECT 1 FROM members o WHERE o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.user_id <> m.user_id)`, id)
		if err != nil {
			return err
		}
		if sole {
			return decoy.ErrLastOwner
		}
		tag, err := tx.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return userNotFound()
		}
		return nil
	})
}

// Access tokens

const tokenColumns = `id, name, user_id, created_at, expires_at, last_used_at, hash`

func scanToken(s scanner, extra ...any) (*decoy.AccessToken, error) {
	var t decoy.AccessToken
	if err := s.Scan(append([]any{&t.ID, &t.Name, &t.UserID, &t.CreatedAt, &t.ExpiresAt, &t.LastUsedAt, &t.Hash}, extra...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, tokenNotFound()
		}
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC(), utcPtr(t.LastUsedAt)
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
	err := db.write(ctx, func(tx pgx.Tx) error {
		// The user's row is locked: its tokens are counted exactly, and
		// a password change (UpdateUser) is wholly before or after.
		var current []byte
		if err := tx.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = $1 FOR NO KEY UPDATE`, t.UserID).Scan(&current); errors.Is(err, pgx.ErrNoRows) {
			return userNotFound()
		} else if err != nil {
			return err
		}
		if t.PasswordHash != nil && !bytes.Equal(current, t.PasswordHash) {
			return decoy.ErrPasswordChanged
		}
		// Expired by the caller's clock, as invitations (CreateInvitation).
		if _, err := tx.Exec(ctx, `DELETE FROM access_tokens WHERE expires_at <= $1`, stamp(t.CreatedAt)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			DELETE FROM access_tokens WHERE hash IN (SELECT hash FROM access_tokens WHERE user_id = $1
				ORDER BY created_at DESC OFFSET $2)`, t.UserID, decoy.MaxAccessTokens-1); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO access_tokens (id, name, hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			id, t.Name, t.Hash, t.UserID, stamp(t.CreatedAt), stamp(t.ExpiresAt))
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
	t, err := scanToken(db.pool.QueryRow(ctx, `
		SELECT t.id, t.name, t.user_id, t.created_at, t.expires_at, t.last_used_at, t.hash,
			u.id, u.email, u.name, u.server_admin, u.password_hash, u.created_at
		FROM access_tokens t JOIN users u ON u.id = t.user_id
		WHERE t.hash = $1 AND t.expires_at > $2`, hash, stamp(now)),
		&u.ID, &u.Email, &u.Name, &u.ServerAdmin, &u.PasswordHash, &u.CreatedAt)
	if err != nil {
		return nil, nil, classify(err)
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return t, &u, nil
}

// DeleteAccessToken revokes a token.
func (db *DB) DeleteAccessToken(ctx context.Context, hash []byte) (*decoy.AccessToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `DELETE FROM access_tokens WHERE hash = $1 RETURNING `+tokenColumns, hash))
	return t, classify(err)
}

// ListAccessTokens returns a user's unexpired tokens, newest first.
func (db *DB) ListAccessTokens(ctx context.Context, userID string, now time.Time) (_ []*decoy.AccessToken, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM users WHERE id = $1`, userID); err != nil {
		return nil, err
	} else if !ok {
		return nil, userNotFound()
	}
	rows, err := db.pool.Query(ctx, `SELECT `+tokenColumns+` FROM access_tokens WHERE user_id = $1 AND expires_at > $2
		ORDER BY created_at DESC, id LIMIT $3`, userID, stamp(now), decoy.MaxAccessTokens)
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
	t, err := scanToken(db.pool.QueryRow(ctx, `DELETE FROM access_tokens WHERE user_id = $1 AND id = $2 RETURNING `+tokenColumns, userID, id))
	return t, classify(err)
}

// TouchAccessTokens records tokens' last use in one statement; a time
// never goes back.
func (db *DB) TouchAccessTokens(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	ats := make([]time.Time, 0, len(used))
	for id, at := range used {
		ids, ats = append(ids, id), append(ats, stamp(at))
	}
	_, err := db.pool.Exec(ctx, `
		UPDATE access_tokens t SET last_used_at = GREATEST(t.last_used_at, u.at)
		FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at) WHERE t.id = u.id`, ids, ats)
	return classify(err)
}

// Workspaces

const workspaceColumns = `id, name, max_mocks, max_bytes, monthly_reads, created_at`

func scanWorkspace(s scanner, extra ...any) (*decoy.Workspace, error) {
	var w decoy.Workspace
	l := &w.Limits
	if err := s.Scan(append([]any{&w.ID, &w.Name, &l.MaxMocks, &l.MaxBytes, &l.MonthlyReads, &w.CreatedAt}, extra...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, workspaceNotFound()
		}
		return nil, err
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return &w, nil
}

func scanWorkspaces(rows pgx.Rows, err error) ([]*decoy.Workspace, error) {
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var ws []*decoy.Workspace
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, classify(err)
		}
		ws = append(ws, w)
	}
	return ws, classify(rows.Err())
}

// CreateWorkspace stores a workspace, its default project and its owner.
func (db *DB) CreateWorkspace(ctx context.Context, w *decoy.Workspace, ownerID string) (*decoy.Workspace, error) {
	var created *decoy.Workspace
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		id, at := w.ID, w.CreatedAt
		if id == "" {
			id = uuid.NewString()
		}
		if at.IsZero() {
			at = db.now()
		}
		l := w.Limits
		created, err = scanWorkspace(tx.QueryRow(ctx, `
			INSERT INTO workspaces (id, name, max_mocks, max_bytes, monthly_reads, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+workspaceColumns,
			id, w.Name, l.MaxMocks, l.MaxBytes, l.MonthlyReads, stamp(at)))
		if pgCode(err) == uniqueViolation {
			return decoy.Errorf(decoy.ECONFLICT, "A workspace with id %s already exists", id)
		}
		if err != nil {
			return err
		}
		if _, err := insertProject(ctx, tx, uuid.NewString(), id, decoy.DefaultName, "", at); err != nil {
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
	w, err := scanWorkspace(db.pool.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`, id))
	return w, classify(err)
}

// ListWorkspaces lists every workspace, or a user's, in creation order, at
// most decoy.MaxWorkspaces.
func (db *DB) ListWorkspaces(ctx context.Context, userID string) ([]*decoy.Workspace, error) {
	if userID == "" {
		return scanWorkspaces(db.pool.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY seq LIMIT $1`, decoy.MaxWorkspaces))
	}
	return scanWorkspaces(db.pool.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE id IN (SELECT workspace_id FROM members WHERE user_id = $1) ORDER BY seq LIMIT $2`, userID, decoy.MaxWorkspaces))
}

// UpdateWorkspace renames a workspace or sets its limits.
func (db *DB) UpdateWorkspace(ctx context.Context, id string, upd decoy.WorkspaceUpdate) (*decoy.Workspace, error) {
	sets := []string{"id = id"}
	args := []any{id}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if upd.Name != nil {
		set("name", *upd.Name)
	}
	for _, name := range decoy.LimitNames {
		if l, ok := upd.Limits[name]; ok {
			set(name, l)
		}
	}
	w, err := scanWorkspace(db.pool.QueryRow(ctx, `UPDATE workspaces SET `+strings.Join(sets, ", ")+` WHERE id = $1 RETURNING `+workspaceColumns, args...))
	return w, classify(err)
}

// DeleteWorkspace deletes a workspace's mocks as DeleteMock does, then the
// workspace with everything else it holds.
func (db *DB) DeleteWorkspace(ctx context.Context, id string) ([]string, error) {
	if _, err := db.FindWorkspace(ctx, id); err != nil {
		return nil, err
	}
	return db.emptyThenDelete(ctx, `workspace_id = $1`, id, `DELETE FROM workspaces WHERE id = $1`)
}

// emptyBatch is how many mocks emptyThenDelete looks up at a time.
const emptyBatch = 256

// emptyThenDelete deletes, through DeleteMock, the mocks matching where
// (with its one argument arg), then runs del with arg. The foreign key of
// mocks makes del fail while a mock made meanwhile holds on: it then goes
// round again. It returns the ids of the mocks it deleted.
func (db *DB) emptyThenDelete(ctx context.Context, where, arg, del string) ([]string, error) {
	var deleted []string
	for {
		rows, err := db.pool.Query(ctx, `SELECT id FROM mocks WHERE `+where+` ORDER BY seq LIMIT `+strconv.Itoa(emptyBatch), arg)
		if err != nil {
			return deleted, classify(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
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
		_, err = db.pool.Exec(ctx, del, arg)
		if pgCode(err) == foreignKeyViolation {
			continue
		}
		return deleted, classify(err)
	}
}

// WorkspaceUsage returns how many mocks a workspace holds and their bytes.
func (db *DB) WorkspaceUsage(ctx context.Context, id string) (mocks, bytes int64, err error) {
	defer func() { err = classify(err) }()
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err = pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		if ok, err := exists(ctx, tx, `SELECT 1 FROM workspaces WHERE id = $1`, id); err != nil {
			return err
		} else if !ok {
			return workspaceNotFound()
		}
		if mocks, err = count(ctx, tx, `SELECT count(*) FROM mocks WHERE workspace_id = $1`, id); err != nil {
			return err
		}
		bytes, err = workspaceBytes(ctx, tx, id)
		return err
	})
	return mocks, bytes, err
}

// workspaceBytes is the bytes of data a workspace holds, what its max_bytes
// limits: the sizes of its mocks' kept versions, the current data
// included (§9), and of their live data apart from it (§12.2; see
// decoy.LiveStore).
func workspaceBytes(ctx context.Context, q querier, workspaceID string) (int64, error) {
	return count(ctx, q, `SELECT COALESCE((SELECT sum(v.size) FROM mock_versions v JOIN mocks m ON m.id = v.mock_id
		WHERE m.workspace_id = $1), 0)::bigint + COALESCE((SELECT sum(live_size) FROM mocks WHERE workspace_id = $1), 0)::bigint`, workspaceID)
}

// checkLimits locks a workspace and refuses the transaction's write when
// the workspace, with it, is past a limit it grew: the mocks when
// grewMocks, the bytes when grewBytes. A write that grows neither passes,
// even over a limit (a limit lowered below what the workspace holds). It
// runs after the write, so that the lock is held only to the commit.
func checkLimits(ctx context.Context, tx pgx.Tx, workspaceID string, grewMocks, grewBytes bool) error {
	if !grewMocks && !grewBytes {
		return nil
	}
	maxMocks, maxBytes, err := lockWorkspace(ctx, tx, workspaceID)
	if err != nil {
		return err
	}
	if maxMocks != nil && grewMocks {
		n, err := count(ctx, tx, `SELECT count(*) FROM mocks WHERE workspace_id = $1`, workspaceID)
		if err != nil {
			return err
		}
		if n > *maxMocks {
			return decoy.LimitError("max_mocks")
		}
	}
	if maxBytes != nil && grewBytes {
		n, err := workspaceBytes(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		if n > *maxBytes {
			return decoy.LimitError("max_bytes")
		}
	}
	return nil
}

// placeMock returns the workspace and project of a new mock: its project,
// the default one when m.ProjectID is empty.
func placeMock(ctx context.Context, tx pgx.Tx, m *decoy.Mock) (workspaceID, projectID string, err error) {
	projectID = m.ProjectID
	if projectID == "" {
		projectID = decoy.DefaultProjectID
	}
	err = tx.QueryRow(ctx, `SELECT workspace_id FROM projects WHERE id = $1`, projectID).Scan(&workspaceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", projectNotFound()
	}
	return workspaceID, projectID, err
}

// Members

// ListMembers lists a workspace's members, owners first, then by email.
func (db *DB) ListMembers(ctx context.Context, workspaceID string) (_ []*decoy.Member, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM workspaces WHERE id = $1`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.pool.Query(ctx, `
		SELECT u.id, u.email, u.name, m.role FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = $1
		ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, u.email_key LIMIT $2`, workspaceID, decoy.MaxMembers)
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
	role, err := memberRole(ctx, db.pool, workspaceID, userID)
	if err == nil && role == "" {
		return "", workspaceNotFound()
	}
	return role, classify(err)
}

// memberRole is a user's role in a workspace, "" when not a member.
func memberRole(ctx context.Context, q querier, workspaceID, userID string) (decoy.Role, error) {
	var role decoy.Role
	err := q.QueryRow(ctx, `SELECT role FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return role, err
}

// PutMember adds a member or changes its role.
func (db *DB) PutMember(ctx context.Context, workspaceID, userID string, role decoy.Role) (*decoy.Member, error) {
	var m *decoy.Member
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		m, err = putMember(ctx, tx, workspaceID, userID, role)
		return err
	})
	return m, err
}

func putMember(ctx context.Context, tx pgx.Tx, workspaceID, userID string, role decoy.Role) (*decoy.Member, error) {
	if !role.Valid() {
		return nil, decoy.Errorf(decoy.EINVALID, "role must be owner, editor or viewer")
	}
	if _, _, err := lockWorkspace(ctx, tx, workspaceID); err != nil {
		return nil, err
	}
	var m decoy.Member
	if err := tx.QueryRow(ctx, `SELECT id, email, name FROM users WHERE id = $1`, userID).Scan(&m.UserID, &m.Email, &m.Name); errors.Is(err, pgx.ErrNoRows) {
		return nil, userNotFound()
	} else if err != nil {
		return nil, err
	}
	m.Role = role
	old, err := memberRole(ctx, tx, workspaceID, userID)
	if err != nil {
		return nil, err
	}
	if old == "" {
		if err := checkMemberBounds(ctx, tx, workspaceID, userID); err != nil {
			return nil, err
		}
		_, err = tx.Exec(ctx, `INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3)`, workspaceID, userID, role)
		return &m, err
	}
	if old == decoy.RoleOwner && role != decoy.RoleOwner {
		if err := keepOwner(ctx, tx, workspaceID, userID); err != nil {
			return nil, err
		}
	}
	m.Previous = old
	_, err = tx.Exec(ctx, `UPDATE members SET role = $1 WHERE workspace_id = $2 AND user_id = $3`, role, workspaceID, userID)
	return &m, err
}

// checkMemberBounds refuses a new member past decoy.MaxMembers, counting
// pending invitations, or a user's membership past it. It runs under
// lockWorkspace.
func checkMemberBounds(ctx context.Context, q querier, workspaceID, userID string) error {
	n, err := count(ctx, q, `SELECT (SELECT count(*) FROM members WHERE workspace_id = $1) + (SELECT count(*) FROM invitations WHERE workspace_id = $1)`, workspaceID)
	if err != nil {
		return err
	}
	if n >= decoy.MaxMembers {
		return decoy.Errorf(decoy.EINVALID, "A workspace has at most %d members and invitations", decoy.MaxMembers)
	}
	if userID == "" {
		return nil
	}
	if n, err = count(ctx, q, `SELECT count(*) FROM members WHERE user_id = $1`, userID); err != nil {
		return err
	}
	if n >= decoy.MaxMembers {
		return decoy.Errorf(decoy.EINVALID, "A user is a member of at most %d workspaces", decoy.MaxMembers)
	}
	return nil
}

// keepOwner returns ErrLastOwner when userID is the only owner of the
// workspace. It runs under lockWorkspace.
func keepOwner(ctx context.Context, q querier, workspaceID, userID string) error {
	other, err := exists(ctx, q, `SELECT 1 FROM members WHERE workspace_id = $1 AND role = 'owner' AND user_id <> $2`, workspaceID, userID)
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
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, _, err := lockWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		role, err := memberRole(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		if role == "" {
			return userNotFound()
		}
		if role == decoy.RoleOwner {
			if err := keepOwner(ctx, tx, workspaceID, userID); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID)
		return err
	})
}

// Memberships lists the workspaces of a user with its role in each.
func (db *DB) Memberships(ctx context.Context, userID string) (_ []decoy.Membership, err error) {
	defer func() { err = classify(err) }()
	rows, err := db.pool.Query(ctx, `
		SELECT w.id, w.name, w.max_mocks, w.max_bytes, w.monthly_reads, w.created_at, m.role
		FROM members m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = $1 ORDER BY w.seq LIMIT $2`, userID, decoy.MaxMembers)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []decoy.Membership
	for rows.Next() {
		var role decoy.Role
		w, err := scanWorkspace(rows, &role)
		if err != nil {
			return nil, err
		}
		ms = append(ms, decoy.Membership{Workspace: *w, Role: role})
	}
	return ms, rows.Err()
}

// Invitations

// CreateInvitation stores an invitation, replacing any pending one of the
// same email to the same workspace; expired ones go.
func (db *DB) CreateInvitation(ctx context.Context, inv *decoy.Invitation) error {
	if !inv.Role.Valid() {
		return decoy.Errorf(decoy.EINVALID, "role must be owner, editor or viewer")
	}
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, _, err := lockWorkspace(ctx, tx, inv.WorkspaceID); err != nil {
			return err
		}
		key := decoy.EmailKey(inv.Email)
		// Expired as of the invitation's making: the caller's clock (see
		// the SQLite store).
		if _, err := tx.Exec(ctx, `DELETE FROM invitations WHERE expires_at <= $1 OR (workspace_id = $2 AND email_key = $3)`,
			stamp(inv.CreatedAt), inv.WorkspaceID, key); err != nil {
			return err
		}
		if err := checkMemberBounds(ctx, tx, inv.WorkspaceID, ""); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO invitations (hash, workspace_id, email, email_key, role, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			inv.Hash, inv.WorkspaceID, inv.Email, key, inv.Role, stamp(inv.CreatedAt), stamp(inv.ExpiresAt))
		return err
	})
}

const invitationColumns = `hash, workspace_id, email, role, created_at, expires_at`

func scanInvitation(s scanner) (*decoy.Invitation, error) {
	var inv decoy.Invitation
	if err := s.Scan(&inv.Hash, &inv.WorkspaceID, &inv.Email, &inv.Role, &inv.CreatedAt, &inv.ExpiresAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, invitationNotFound()
		}
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC()
	return &inv, nil
}

// FindInvitation returns an unexpired invitation.
func (db *DB) FindInvitation(ctx context.Context, hash []byte, now time.Time) (*decoy.Invitation, error) {
	inv, err := scanInvitation(db.pool.QueryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE hash = $1 AND expires_at > $2`, hash, stamp(now)))
	return inv, classify(err)
}

// ListInvitations lists a workspace's pending invitations, oldest first.
func (db *DB) ListInvitations(ctx context.Context, workspaceID string, now time.Time) (_ []*decoy.Invitation, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM workspaces WHERE id = $1`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.pool.Query(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE workspace_id = $1 AND expires_at > $2 ORDER BY created_at, email_key LIMIT $3`, workspaceID, stamp(now), decoy.MaxMembers)
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
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		inv, err = scanInvitation(tx.QueryRow(ctx, `DELETE FROM invitations WHERE workspace_id = $1 AND email_key = $2 AND expires_at > $3 RETURNING `+invitationColumns,
			workspaceID, decoy.EmailKey(email), stamp(now)))
		return err
	})
	return inv, err
}

// AcceptInvitation uses an invitation once: deleting it claims it, so of
// concurrent acceptances one finds it.
func (db *DB) AcceptInvitation(ctx context.Context, hash []byte, now time.Time, u *decoy.User) (*decoy.User, error) {
	var user *decoy.User
	err := db.write(ctx, func(tx pgx.Tx) error {
		inv, err := scanInvitation(tx.QueryRow(ctx, `DELETE FROM invitations WHERE hash = $1 AND expires_at > $2 RETURNING `+invitationColumns, hash, stamp(now)))
		if err != nil {
			return err
		}
		// An invitation makes a new user only: accepting it never acts
		// as an account made since (its secret would then sign anyone in
		// as that account). The transaction is undone, and the invitation
		// stays unused.
		_, err = scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = $1`, decoy.EmailKey(inv.Email)))
		switch {
		case err == nil:
			return decoy.ErrEmailTaken
		case decoy.ErrorCode(err) != decoy.ENOTFOUND:
			return err
		}
		nu := *u
		nu.Email = inv.Email
		if user, err = insertUser(ctx, tx, &nu, stamp(now)); err != nil {
			return err
		}
		old, err := memberRole(ctx, tx, inv.WorkspaceID, user.ID)
		if err != nil || old.Allows(inv.Role) {
			return err // a lower role never demotes
		}
		_, err = putMember(ctx, tx, inv.WorkspaceID, user.ID, inv.Role)
		return err
	})
	return user, err
}

// Projects

const projectColumns = `id, workspace_id, name, slug, upstream, mode, routes_version, created_at`

func scanProject(s scanner) (*decoy.Project, error) {
	var p decoy.Project
	if err := s.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.Slug, &p.Upstream, &p.Mode, &p.RoutesVersion, &p.CreatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, projectNotFound()
		}
		return nil, err
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return &p, nil
}

// projectConflict names a unique violation on projects.
func projectConflict(err error, id string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		switch pgErr.ConstraintName {
		case "projects_workspace_id_name_key":
			return decoy.Errorf(decoy.ECONFLICT, "A project with this name exists in the workspace")
		case "projects_slug_key":
			return decoy.ErrSlugTaken
		}
		return decoy.Errorf(decoy.ECONFLICT, "A project with id %s already exists", id)
	}
	return err
}

// CreateProject stores a project, with its slug or one derived from its
// name.
func (db *DB) CreateProject(ctx context.Context, p *decoy.Project) (*decoy.Project, error) {
	var created *decoy.Project
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		if _, _, err := lockWorkspace(ctx, tx, p.WorkspaceID); err != nil {
			return err
		}
		if n, err := count(ctx, tx, `SELECT count(*) FROM projects WHERE workspace_id = $1`, p.WorkspaceID); err != nil {
			return err
		} else if n >= decoy.MaxProjects {
			return decoy.Errorf(decoy.EINVALID, "A workspace has at most %d projects", decoy.MaxProjects)
		}
		id, at := p.ID, p.CreatedAt
		if id == "" {
			id = uuid.NewString()
		}
		if at.IsZero() {
			at = db.now()
		}
		created, err = insertProject(ctx, tx, id, p.WorkspaceID, p.Name, p.Slug, at)
		return err
	})
	return created, err
}

// FindProject returns a project.
func (db *DB) FindProject(ctx context.Context, id string) (*decoy.Project, error) {
	p, err := scanProject(db.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id))
	return p, classify(err)
}

// ListProjects lists a workspace's projects in creation order.
func (db *DB) ListProjects(ctx context.Context, workspaceID string) (_ []*decoy.Project, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM workspaces WHERE id = $1`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.pool.Query(ctx, `SELECT `+projectColumns+` FROM projects WHERE workspace_id = $1 ORDER BY seq LIMIT $2`, workspaceID, decoy.MaxProjects)
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
	p, err := scanProject(db.pool.QueryRow(ctx, `UPDATE projects SET name = $1 WHERE id = $2 RETURNING `+projectColumns, name, id))
	return p, classify(projectConflict(err, id))
}

// DeleteProject deletes an empty project, or with cascade its mocks first
// (as DeleteMock does). The foreign key of mocks keeps a project that
// holds mocks.
func (db *DB) DeleteProject(ctx context.Context, id string, cascade bool) ([]string, error) {
	if _, err := db.FindProject(ctx, id); err != nil {
		return nil, err
	}
	const del = `DELETE FROM projects WHERE id = $1`
	if cascade {
		return db.emptyThenDelete(ctx, `project_id = $1`, id, del)
	}
	tag, err := db.pool.Exec(ctx, del, id)
	if pgCode(err) == foreignKeyViolation {
		return nil, decoy.ErrProjectNotEmpty
	}
	if err != nil {
		return nil, classify(err)
	}
	if tag.RowsAffected() == 0 {
		return nil, projectNotFound()
	}
	return nil, nil
}

// API keys

const keyColumns = `id, name, workspace_id, role, project_id, expires_at, created_at, last_used_at, hash`

func scanKey(s scanner) (*decoy.APIKey, error) {
	var k decoy.APIKey
	if err := s.Scan(&k.ID, &k.Name, &k.WorkspaceID, &k.Role, &k.ProjectID, &k.ExpiresAt, &k.CreatedAt, &k.LastUsedAt, &k.Hash); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, keyNotFound()
		}
		return nil, err
	}
	k.ExpiresAt, k.LastUsedAt = utcPtr(k.ExpiresAt), utcPtr(k.LastUsedAt)
	k.CreatedAt = k.CreatedAt.UTC()
	return &k, nil
}

// CreateKey stores a key. Past decoy.MaxKeys keys in the workspace, the
// revoked ones go; past it unrevoked, it is refused.
func (db *DB) CreateKey(ctx context.Context, k *decoy.APIKey) (*decoy.APIKey, error) {
	if k.Role != decoy.RoleEditor && k.Role != decoy.RoleViewer {
		return nil, decoy.Errorf(decoy.EINVALID, "role must be editor or viewer")
	}
	var created *decoy.APIKey
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		if _, _, err := lockWorkspace(ctx, tx, k.WorkspaceID); err != nil {
			return err
		}
		if k.ProjectID != nil {
			if ok, err := exists(ctx, tx, `SELECT 1 FROM projects WHERE id = $1 AND workspace_id = $2`, *k.ProjectID, k.WorkspaceID); err != nil {
				return err
			} else if !ok {
				return projectNotFound()
			}
		}
		if n, err := count(ctx, tx, `SELECT count(*) FROM api_keys WHERE workspace_id = $1`, k.WorkspaceID); err != nil {
			return err
		} else if n >= decoy.MaxKeys {
			if _, err := tx.Exec(ctx, `DELETE FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NOT NULL`, k.WorkspaceID); err != nil {
				return err
			}
			if n, err := count(ctx, tx, `SELECT count(*) FROM api_keys WHERE workspace_id = $1`, k.WorkspaceID); err != nil {
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
			at = db.now()
		}
		created, err = scanKey(tx.QueryRow(ctx, `
			INSERT INTO api_keys (id, name, workspace_id, role, project_id, expires_at, created_at, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+keyColumns,
			id, k.Name, k.WorkspaceID, k.Role, k.ProjectID, stampPtr(k.ExpiresAt), stamp(at), k.Hash))
		if pgCode(err) == uniqueViolation {
			return decoy.Errorf(decoy.ECONFLICT, "A key with this id or secret exists")
		}
		return err
	})
	return created, err
}

// ListKeys lists a workspace's unrevoked keys in creation order.
func (db *DB) ListKeys(ctx context.Context, workspaceID string) (_ []*decoy.APIKey, err error) {
	defer func() { err = classify(err) }()
	if ok, err := exists(ctx, db.pool, `SELECT 1 FROM workspaces WHERE id = $1`, workspaceID); err != nil {
		return nil, err
	} else if !ok {
		return nil, workspaceNotFound()
	}
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY seq LIMIT $2`, workspaceID, decoy.MaxKeys)
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
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, hash))
	return k, classify(err)
}

// RevokeKey revokes a key of a workspace.
func (db *DB) RevokeKey(ctx context.Context, workspaceID, id string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE workspace_id = $2 AND id = $3 AND revoked_at IS NULL`, db.now(), workspaceID, id)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() == 0 {
		return keyNotFound()
	}
	return nil
}

// TouchKeys records keys' last use in one statement; a time never goes
// back.
func (db *DB) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	ats := make([]time.Time, 0, len(used))
	for id, at := range used {
		ids, ats = append(ids, id), append(ats, stamp(at))
	}
	_, err := db.pool.Exec(ctx, `
		UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
		FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at) WHERE k.id = u.id`, ids, ats)
	return classify(err)
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
	var workspace *string
	if e.WorkspaceID != "" {
		workspace = &e.WorkspaceID
	}
	var seq int64
	err := db.pool.QueryRow(ctx, `
		INSERT INTO audit_log (workspace_id, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, target_name, ip)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING seq`,
		workspace, stamp(e.At), e.Actor.Kind, e.Actor.ID, e.Actor.Label, e.Action, e.Target.Kind, e.Target.ID, e.Target.Name, e.IP).Scan(&seq)
	if pgCode(err) == foreignKeyViolation {
		return workspaceNotFound()
	}
	if err != nil || !pruneTurn() {
		return classify(err)
	}
	// Two forms, as IS NOT DISTINCT FROM would not use the index.
	match := `workspace_id = $1`
	if workspace == nil {
		match = `workspace_id IS NULL AND $1::text IS NULL`
	}
	_, err = db.pool.Exec(ctx, `DELETE FROM audit_log WHERE `+match+` AND seq <=
		(SELECT seq FROM audit_log WHERE `+match+` ORDER BY seq DESC LIMIT 1 OFFSET $2)`, workspace, auditKeep)
	return classify(err)
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
	rows, err := db.pool.Query(ctx, `
		SELECT seq, workspace_id, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, target_name, ip
		FROM audit_log WHERE workspace_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, workspaceID, before, limit+1)
	if err != nil {
		return nil, "", err
	}
	return readPage(rows, limit, func(s scanner, seq *int64) (*decoy.AuditEntry, error) {
		var e decoy.AuditEntry
		err := s.Scan(seq, &e.WorkspaceID, &e.At, &e.Actor.Kind, &e.Actor.ID, &e.Actor.Label, &e.Action,
			&e.Target.Kind, &e.Target.ID, &e.Target.Name, &e.IP)
		e.At = e.At.UTC()
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
	where := []string{"seq > $1"}
	args := []any{after}
	add := func(cond string, v ...any) {
		for _, v := range v {
			args = append(args, v)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if f.WorkspaceIDs != nil {
		add("workspace_id = ANY(?)", f.WorkspaceIDs)
	}
	if f.WorkspaceID != "" {
		add("workspace_id = ?", f.WorkspaceID)
	}
	if f.ProjectID != "" {
		add("project_id = ?", f.ProjectID)
	}
	if f.Q != "" {
		// ids are lowercase.
		q := likeEscape(f.Q)
		add(`(name ILIKE ? OR id LIKE ?)`, "%"+q+"%", strings.ToLower(q)+"%")
	}
	args = append(args, limit+1)
	rows, err := db.pool.Query(ctx, `SELECT `+mockColumns+`, seq FROM mocks WHERE `+strings.Join(where, " AND ")+
		` ORDER BY seq LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, "", err
	}
	return readPage(rows, limit, scanMockSeq)
}

// likeEscape escapes the wildcards of LIKE, with \ (its default escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
