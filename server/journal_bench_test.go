package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/redis"
	"github.com/decoy-mock/decoy/server"
)

// BenchmarkJournal reads a small query of the 1,000-user document through a
// route over loopback, as BenchmarkRoutes' route-of-1 does, with the
// request journal off, in memory, and in Redis (DECOY_TEST_REDIS_URL; a key
// prefix of its own). Recording should cost a read at most 5% (§13.2).
func BenchmarkJournal(b *testing.B) {
	for _, store := range []string{"off", "memory", "redis"} {
		b.Run(store, func(b *testing.B) {
			var js decoy.JournalStore
			switch store {
			case "memory":
				js = journal.NewRing(journal.RingConfig{Size: decoy.DefaultJournalSize})
			case "redis":
				u := os.Getenv("DECOY_TEST_REDIS_URL")
				if u == "" {
					b.Skip("set DECOY_TEST_REDIS_URL to measure the journal in Redis")
				}
				c, err := redis.Open(context.Background(), u)
				if err != nil {
					b.Fatal(err)
				}
				prefix := "decoybench:" + rand.Text()[:8] + ":"
				b.Cleanup(func() {
					c.Del(context.Background(), prefix+"{project:"+decoy.DefaultProjectID+"}:journal")
					c.Close()
				})
				js = redis.NewJournal(c, prefix, decoy.DefaultJournalSize)
			}
			var j *journal.Journal
			h, m := usersServer(b, 1000, withTeams, func(c *server.Config) {
				if js == nil {
					return
				}
				j = journal.New(journal.Config{Store: js})
				c.Journal = j
			})
			if j != nil {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { j.Run(ctx); close(done) }()
				b.Cleanup(func() { cancel(); <-done })
			}
			if _, err := h.Store.CreateRoute(context.Background(), &decoy.Route{ProjectID: decoy.DefaultProjectID, Method: "GET", Path: "/users",
				MockID: m.ID, Action: decoy.ActionRead}, decoy.DefaultMaxRoutes); err != nil {
				b.Fatal(err)
			}
			// Wall time on shared cores is noisy: the process's CPU time a
			// read costs (client, server and the journal's writer) is
			// reported too.
			before := cpuTime()
			readOverLoopback(b, h.URL, "/p/default/users?order_by=age&limit=10", "Accept-Encoding: gzip, deflate, br\r\nX-Request-Id: "+hex.EncodeToString([]byte("bench"))+"\r\n")
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
			if j != nil {
				// An entry dropped (its writer behind, on busy cores) is
				// work not measured: a share of them says the figure is low.
				q, st := j.Dropped()
				b.ReportMetric(float64(q+st)/float64(b.N), "dropped/op")
			}
		})
	}
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
