package decoy

import (
	"context"
	"time"
)

// This file is the vocabulary of Decoy Studio, the web dashboard: the
// sign-in sessions it keeps in the store, and the per-minute and per-day
// history of each mock's reads that its charts show.

// EFORBIDDEN is the code of a request that is authenticated but not let
// through: a Studio call with a missing or wrong CSRF token, or a sign-in
// from another site. The HTTP server answers it with 403.
const EFORBIDDEN = "forbidden"

// Session is a signed-in Studio user. The browser holds the session's
// cookie, "<ID>.<secret>"; the store keeps the ID and only the SHA-256 of the
// secret, so a copy of the store signs nobody in.
type Session struct {
	// ID is the public half of the cookie, random, the key the session is
	// found by.
	ID string
	// SecretHash is the SHA-256 of the secret half of the cookie.
	SecretHash []byte
	// AdminHash identifies the admin token the session was opened with
	// (a hash of its hash): a session ends when the server's admin token
	// changes. A user's session holds a hash of its UserID instead, so
	// that a session whose UserID was lost opens nothing.
	AdminHash []byte
	// UserID is the user signed in with an email and a password (§6);
	// empty for the server admin, signed in with the admin token. A
	// user's sessions end when the user is deleted or its password
	// changes (TeamStore), not when the admin token changes.
	UserID string

	CreatedAt time.Time
	// LastSeenAt is when the session was last used (updated at most once a
	// minute), for the idle expiry.
	LastSeenAt time.Time
	// ExpiresAt is the absolute end of the session, however active.
	ExpiresAt time.Time
}

// SessionStore keeps Studio sessions, so that they hold across replicas and
// restarts.
// MaxSessionsPerUser bounds the Studio sessions of one user: each
// sign-in makes one that lives up to a week, so a script signing in over
// and over would otherwise fill the table.
const MaxSessionsPerUser = 100

type SessionStore interface {
	// CreateSession stores a new session. Returns ECONFLICT when the ID is
	// taken, ENOTFOUND when its UserID is no user's. A user keeps at most
	// MaxSessionsPerUser sessions (the server admin, signed in with the
	// admin token, as many per AdminHash): past it, the oldest are
	// deleted.
	CreateSession(ctx context.Context, s *Session) error

	// FindSession returns the session with id. Returns ENOTFOUND.
	FindSession(ctx context.Context, id string) (*Session, error)

	// TouchSession sets the LastSeenAt of a session. A session that is gone
	// is not an error.
	TouchSession(ctx context.Context, id string, seen time.Time) error

	// DeleteSession deletes a session. A session that is gone is not an
	// error: signing out twice is signing out.
	DeleteSession(ctx context.Context, id string) error

	// DeleteExpiredSessions deletes the sessions that expired at now or
	// were last seen at or before idleBefore, and returns how many.
	DeleteExpiredSessions(ctx context.Context, now, idleBefore time.Time) (int64, error)

	// DeleteSessionsNotOf deletes the server admin's sessions (no UserID)
	// whose AdminHash is not adminHash (opened under another admin token),
	// and returns how many. Users' sessions stay.
	DeleteSessionsNotOf(ctx context.Context, adminHash []byte) (int64, error)
}

// UsageCount is the count of one mock's reads in one minute, added to what
// the store holds: served answers and refused ones (429 of its rate limit or
// monthly quota).
type UsageCount struct {
	MockID string
	// Minute is the UTC minute the reads came in, truncated to the minute.
	Minute  time.Time
	Served  int64
	Refused int64
}

// UsageBucket is one bar of a usage chart: the reads of one minute or one
// day, from Start.
type UsageBucket struct {
	Start   time.Time `json:"start"`
	Served  int64     `json:"served"`
	Refused int64     `json:"refused"`
}

// Bounds of the usage history a store keeps.
const (
	// UsageMinutes is how many minutes of per-minute counts are shown.
	UsageMinutes = 60
	// UsageMinuteRetention is how long per-minute counts are kept: the
	// hour shown and room for counts flushed late.
	UsageMinuteRetention = 2 * time.Hour
	// UsageDayRetention is how long per-day counts are kept: the current
	// month and the one before.
	UsageDayRetention = 62 * 24 * time.Hour
)

// UsageHistoryStore keeps per-minute and per-day counts of each mock's
// reads, added to by every replica, so that they sum up.
type UsageHistoryStore interface {
	// AddUsage adds counts to the minute and the day (UTC) of each, and
	// deletes per-minute counts older than UsageMinuteRetention and
	// per-day counts older than UsageDayRetention before now. Counts of
	// mocks that no longer exist are dropped.
	AddUsage(ctx context.Context, counts []UsageCount, now time.Time) error

	// UsageHistory returns the counts of mock id per minute from
	// minutesFrom and per day from daysFrom (a UTC midnight), oldest first;
	// buckets with no reads are left out.
	UsageHistory(ctx context.Context, id string, minutesFrom, daysFrom time.Time) (minutes, days []UsageBucket, err error)
}

// UsageHistory is the recent reads of a mock, as the admin API shows it:
// one bucket for each of the last UsageMinutes minutes (the current one
// last) and one for each day of the current UTC month up to today.
type UsageHistory struct {
	Minutes []UsageBucket `json:"minutes"`
	Days    []UsageBucket `json:"days"`
}
