package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file keeps what Decoy Studio needs: sign-in sessions, shared by the
// replicas, and the per-minute and per-day usage history of each mock, to
// which every replica adds its own counts.

var (
	_ decoy.SessionStore      = (*DB)(nil)
	_ decoy.UsageHistoryStore = (*DB)(nil)
)

// CreateSession stores a new session. Returns ENOTFOUND when its user is
// gone.
func (db *DB) CreateSession(ctx context.Context, s *decoy.Session) error {
	var user *string
	if s.UserID != "" {
		user = &s.UserID
	}
	_, err := db.pool.Exec(ctx, `
		INSERT INTO studio_sessions (id, secret_hash, admin_hash, user_id, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.ID, s.SecretHash, s.AdminHash, user, s.CreatedAt.UTC(), s.LastSeenAt.UTC(), s.ExpiresAt.UTC())
	switch pgCode(err) {
	case uniqueViolation:
		return decoy.Errorf(decoy.ECONFLICT, "A session with this id exists already")
	case foreignKeyViolation:
		return userNotFound()
	}
	if err != nil {
		return classify(err)
	}
	// The oldest past decoy.MaxSessionsPerUser of the same user, or of the
	// same admin token for the server admin's.
	_, err = db.pool.Exec(ctx, `
		DELETE FROM studio_sessions WHERE id IN (
			SELECT id FROM studio_sessions
			WHERE CASE WHEN $1::text IS NULL THEN user_id IS NULL AND admin_hash = $2 ELSE user_id = $1::text END
			ORDER BY created_at DESC, id DESC OFFSET $3)`,
		user, s.AdminHash, decoy.MaxSessionsPerUser)
	return classify(err)
}

// FindSession returns a session.
func (db *DB) FindSession(ctx context.Context, id string) (*decoy.Session, error) {
	var s decoy.Session
	var user *string
	err := db.pool.QueryRow(ctx, `
		SELECT id, secret_hash, admin_hash, user_id, created_at, last_seen_at, expires_at
		FROM studio_sessions WHERE id = $1`, id).Scan(&s.ID, &s.SecretHash, &s.AdminHash, &user, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, decoy.Errorf(decoy.ENOTFOUND, "Session not found")
	}
	if err != nil {
		return nil, classify(err)
	}
	if user != nil {
		s.UserID = *user
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC(), s.ExpiresAt.UTC()
	return &s, nil
}

// TouchSession sets when a session was last seen.
func (db *DB) TouchSession(ctx context.Context, id string, seen time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE studio_sessions SET last_seen_at = $1 WHERE id = $2`, seen.UTC(), id)
	return classify(err)
}

// DeleteSession deletes a session.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM studio_sessions WHERE id = $1`, id)
	return classify(err)
}

// DeleteExpiredSessions deletes expired and idle sessions.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now, idleBefore time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM studio_sessions WHERE expires_at <= $1 OR last_seen_at <= $2`, now.UTC(), idleBefore.UTC())
	if err != nil {
		return 0, classify(err)
	}
	return tag.RowsAffected(), nil
}

// DeleteSessionsNotOf deletes the server admin's sessions opened under
// another admin token; users' sessions stay.
func (db *DB) DeleteSessionsNotOf(ctx context.Context, adminHash []byte) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM studio_sessions WHERE user_id IS NULL AND admin_hash <> $1`, adminHash)
	if err != nil {
		return 0, classify(err)
	}
	return tag.RowsAffected(), nil
}

// dayOf returns the Unix seconds of the UTC midnight that starts t's day.
func dayOf(t time.Time) int64 {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix()
}

// AddUsage adds counts to the history, in one transaction, and prunes it.
// Each count is an increment, so replicas adding at once sum up.
func (db *DB) AddUsage(ctx context.Context, counts []decoy.UsageCount, now time.Time) error {
	var err error
	// A mock deleted between the check and the insert fails the foreign
	// key: once more, and it is gone from the join.
	for range 2 {
		err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			for _, c := range counts {
				for _, q := range []struct {
					table, col string
					at         int64
				}{{"usage_minutes", "minute", c.Minute.Truncate(time.Minute).Unix()}, {"usage_days", "day", dayOf(c.Minute)}} {
					// Counts of a mock deleted meanwhile are dropped.
					b.Queue(`INSERT INTO `+q.table+` AS u (mock_id, `+q.col+`, served, refused)
						SELECT id, $2, $3, $4 FROM mocks WHERE id = $1
						ON CONFLICT (mock_id, `+q.col+`) DO UPDATE
						SET served = u.served + EXCLUDED.served, refused = u.refused + EXCLUDED.refused`,
						c.MockID, q.at, c.Served, c.Refused)
				}
			}
			b.Queue(`DELETE FROM usage_minutes WHERE minute < $1`, now.Add(-decoy.UsageMinuteRetention).Unix())
			b.Queue(`DELETE FROM usage_days WHERE day < $1`, dayOf(now.Add(-decoy.UsageDayRetention)))
			return tx.SendBatch(ctx, b).Close()
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23503" {
			break
		}
	}
	return classify(err)
}

// UsageHistory returns a mock's counts per minute and per day.
func (db *DB) UsageHistory(ctx context.Context, id string, minutesFrom, daysFrom time.Time) ([]decoy.UsageBucket, []decoy.UsageBucket, error) {
	minutes, err := db.buckets(ctx, `SELECT minute, served, refused FROM usage_minutes WHERE mock_id = $1 AND minute >= $2 ORDER BY minute`, id, minutesFrom.Unix())
	if err != nil {
		return nil, nil, err
	}
	days, err := db.buckets(ctx, `SELECT day, served, refused FROM usage_days WHERE mock_id = $1 AND day >= $2 ORDER BY day`, id, daysFrom.Unix())
	if err != nil {
		return nil, nil, err
	}
	return minutes, days, nil
}

func (db *DB) buckets(ctx context.Context, query string, args ...any) ([]decoy.UsageBucket, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []decoy.UsageBucket
	for rows.Next() {
		var start int64
		var b decoy.UsageBucket
		if err := rows.Scan(&start, &b.Served, &b.Refused); err != nil {
			return nil, classify(err)
		}
		b.Start = time.Unix(start, 0).UTC()
		out = append(out, b)
	}
	return out, classify(rows.Err())
}
