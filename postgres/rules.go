package postgres

import (
	"context"
	"errors"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// This file counts the requests routes' rules with times held for
// (§13.1), in the rule_counts table (migration 0019_route_rules.sql), so
// that replicas sharing the database share the counts when no Redis counts
// them. Counts survive a restart of any replica, as the database does; a
// route deleted takes its counts with it.

var _ decoy.RuleCounter = (*DB)(nil)

// TakeRule counts one more request for rule index of route when fewer than
// times were counted: one statement, whose update waits on the row's lock,
// so that concurrent takes on every replica count exactly. A route that is
// gone (deleted since its rules were read) counts nothing.
func (db *DB) TakeRule(ctx context.Context, routeID string, index int, times int64) (bool, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `
		INSERT INTO rule_counts (route_id, rule, count) VALUES ($1, $2, 1)
		ON CONFLICT (route_id, rule) DO UPDATE SET count = rule_counts.count + 1 WHERE rule_counts.count < $3
		RETURNING count`, routeID, index, times).Scan(&n)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil // at times already
	case errors.As(err, &pgErr) && pgErr.Code == "23503": // foreign_key_violation: the route is gone
		return false, nil
	case err != nil:
		return false, classify(err)
	}
	return true, nil
}

// ResetRules deletes routes' counts, in one statement.
func (db *DB) ResetRules(ctx context.Context, routeIDs ...string) error {
	if len(routeIDs) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM rule_counts WHERE route_id = ANY($1)`, routeIDs)
	return classify(err)
}
