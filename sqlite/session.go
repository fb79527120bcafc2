package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
)

// This file keeps what Decoy Studio needs: sign-in sessions and the
// per-minute and per-day usage history of each mock.

var (
	_ decoy.SessionStore      = (*DB)(nil)
	_ decoy.UsageHistoryStore = (*DB)(nil)
)

func sessionNotFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Session not found") }

// CreateSession stores a new session. Returns ENOTFOUND when its user is
// gone.
func (db *DB) CreateSession(ctx context.Context, s *decoy.Session) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	res, err := db.writes.ExecContext(ctx, `
		INSERT INTO studio_sessions (id, secret_hash, admin_hash, user_id, created_at, last_seen_at, expires_at)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ?4 IS NULL OR EXISTS (SELECT 1 FROM users WHERE id = ?4)`,
		s.ID, s.SecretHash, s.AdminHash, nullString(s.UserID), s.CreatedAt.UnixMilli(), s.LastSeenAt.UnixMilli(), s.ExpiresAt.UnixMilli())
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return decoy.Errorf(decoy.ECONFLICT, "A session with this id exists already")
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return userNotFound()
	}
	// The oldest past decoy.MaxSessionsPerUser of the same user, or of the
	// same admin token for the server admin's.
	// One statement or the other, so that the user's is looked up by its
	// index rather than by a scan of every session.
	if s.UserID != "" {
		_, err = db.writes.ExecContext(ctx, `
			DELETE FROM studio_sessions WHERE id IN (
				SELECT id FROM studio_sessions WHERE user_id = ?1
				ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?2)`,
			s.UserID, decoy.MaxSessionsPerUser)
	} else {
		_, err = db.writes.ExecContext(ctx, `
			DELETE FROM studio_sessions WHERE id IN (
				SELECT id FROM studio_sessions WHERE user_id IS NULL AND admin_hash = ?1
				ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?2)`,
			s.AdminHash, decoy.MaxSessionsPerUser)
	}
	return err
}

// nullString is s, or NULL when s is empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// FindSession returns a session.
func (db *DB) FindSession(ctx context.Context, id string) (*decoy.Session, error) {
	var s decoy.Session
	var user sql.NullString
	var created, seen, expires int64
	err := db.reads.QueryRowContext(ctx, `
		SELECT id, secret_hash, admin_hash, user_id, created_at, last_seen_at, expires_at
		FROM studio_sessions WHERE id = ?`, id).Scan(&s.ID, &s.SecretHash, &s.AdminHash, &user, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, sessionNotFound()
	}
	if err != nil {
		return nil, err
	}
	s.UserID = user.String
	s.CreatedAt = time.UnixMilli(created).UTC()
	s.LastSeenAt = time.UnixMilli(seen).UTC()
	s.ExpiresAt = time.UnixMilli(expires).UTC()
	return &s, nil
}

// TouchSession sets when a session was last seen.
func (db *DB) TouchSession(ctx context.Context, id string, seen time.Time) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	_, err = db.writes.ExecContext(ctx, `UPDATE studio_sessions SET last_seen_at = ? WHERE id = ?`, seen.UnixMilli(), id)
	return err
}

// DeleteSession deletes a session.
func (db *DB) DeleteSession(ctx context.Context, id string) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	_, err = db.writes.ExecContext(ctx, `DELETE FROM studio_sessions WHERE id = ?`, id)
	return err
}

// DeleteExpiredSessions deletes expired and idle sessions.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now, idleBefore time.Time) (_ int64, err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	res, err := db.writes.ExecContext(ctx, `DELETE FROM studio_sessions WHERE expires_at <= ? OR last_seen_at <= ?`,
		now.UnixMilli(), idleBefore.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DeleteSessionsNotOf deletes the server admin's sessions opened under
// another admin token; users' sessions stay.
func (db *DB) DeleteSessionsNotOf(ctx context.Context, adminHash []byte) (_ int64, err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	res, err := db.writes.ExecContext(ctx, `DELETE FROM studio_sessions WHERE user_id IS NULL AND admin_hash <> ?`, adminHash)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// dayOf returns the Unix seconds of the UTC midnight that starts t's day.
func dayOf(t time.Time) int64 {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix()
}

// AddUsage adds counts to the history, in one transaction, and prunes it.
func (db *DB) AddUsage(ctx context.Context, counts []decoy.UsageCount, now time.Time) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The counts of a mock deleted meanwhile are dropped, not an error.
	const add = ` SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM mocks WHERE id = ?1)
		ON CONFLICT DO UPDATE SET served = served + excluded.served, refused = refused + excluded.refused`
	minutes, err := tx.PrepareContext(ctx, `INSERT INTO usage_minutes (mock_id, minute, served, refused)`+add)
	if err != nil {
		return err
	}
	defer minutes.Close()
	days, err := tx.PrepareContext(ctx, `INSERT INTO usage_days (mock_id, day, served, refused)`+add)
	if err != nil {
		return err
	}
	defer days.Close()
	for _, c := range counts {
		if _, err := minutes.ExecContext(ctx, c.MockID, c.Minute.Truncate(time.Minute).Unix(), c.Served, c.Refused); err != nil {
			return err
		}
		if _, err := days.ExecContext(ctx, c.MockID, dayOf(c.Minute), c.Served, c.Refused); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_minutes WHERE minute < ?`, now.Add(-decoy.UsageMinuteRetention).Unix()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_days WHERE day < ?`, dayOf(now.Add(-decoy.UsageDayRetention))); err != nil {
		return err
	}
	return tx.Commit()
}

// UsageHistory returns a mock's counts per minute and per day.
func (db *DB) UsageHistory(ctx context.Context, id string, minutesFrom, daysFrom time.Time) ([]decoy.UsageBucket, []decoy.UsageBucket, error) {
	minutes, err := db.buckets(ctx, `SELECT minute, served, refused FROM usage_minutes WHERE mock_id = ? AND minute >= ? ORDER BY minute`, id, minutesFrom.Unix())
	if err != nil {
		return nil, nil, err
	}
	days, err := db.buckets(ctx, `SELECT day, served, refused FROM usage_days WHERE mock_id = ? AND day >= ? ORDER BY day`, id, daysFrom.Unix())
	if err != nil {
		return nil, nil, err
	}
	return minutes, days, nil
}

func (db *DB) buckets(ctx context.Context, query string, args ...any) ([]decoy.UsageBucket, error) {
	rows, err := db.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []decoy.UsageBucket
	for rows.Next() {
		var start int64
		var b decoy.UsageBucket
		if err := rows.Scan(&start, &b.Served, &b.Refused); err != nil {
			return nil, err
		}
		b.Start = time.Unix(start, 0).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}
