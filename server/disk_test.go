package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// diskFull makes a store's disk full while full is set: reservations find
// no room in the quota journal, and Ping says the file system is full, as
// the SQLite store does.
type diskFull struct {
	decoy.Store
	decoy.QuotaCounter
	full *atomic.Bool
}

func (d diskFull) Ping(ctx context.Context) error {
	if d.full.Load() {
		return decoy.Errorf(decoy.ENOSPACE, "the data directory's file system is full (12 KiB free)")
	}
	return d.Store.Ping(ctx)
}

func (d diskFull) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	if d.full.Load() {
		return 0, false, decoy.Errorf(decoy.ENOSPACE, "The quota journal cannot be written: the data directory's file system is full")
	}
	return d.QuotaCounter.ReserveQuota(ctx, id, month, limit)
}

// On a full disk a read that must be counted is refused, saying why, and
// /readyz sends traffic away, saying why; a read with nothing to count
// against is served. Both come back by themselves when space does.
func TestDiskFullReads(t *testing.T) {
	full := &atomic.Bool{}
	h := servertest.New(t, func(c *server.Config) {
		d := diskFull{Store: c.Store, QuotaCounter: c.Quota, full: full}
		c.Store, c.Quota = d, d
	})
	counted := h.Create(`[1]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(10))})
	unlimited := h.Create(`[2]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(0))})

	full.Store(true)
	servertest.WantError(t, h.Get("/mock/"+counted.ID), http.StatusServiceUnavailable,
		"The monthly quota of this mock cannot be counted: the server's disk is full; try again later")
	if r := h.Get("/mock/" + unlimited.ID); r.Status != http.StatusOK || r.Body != `[2]` {
		t.Errorf("read of a mock without a quota: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, h.Get("/readyz"), http.StatusServiceUnavailable, "Store unavailable: the data directory's file system is full (12 KiB free)")

	full.Store(false)
	if r := h.Get("/mock/" + counted.ID); r.Status != http.StatusOK || r.Header.Get("X-Quota-Remaining") != "9" {
		t.Errorf("read once space returned: %d %s, remaining %s", r.Status, r.Body, r.Header.Get("X-Quota-Remaining"))
	}
	if r := h.Get("/readyz"); r.Status != http.StatusOK {
		t.Errorf("/readyz once space returned: %d %s", r.Status, r.Body)
	}
}
