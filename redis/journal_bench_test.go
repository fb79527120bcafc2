package redis_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/redis"
)

// BenchmarkJournalAppend appends batches of 256 entries such as a small
// read through a route makes (BenchmarkJournal's, in server/), the
// journal's writer's work in Redis: the CPU time an entry costs this
// process (cpu-ns/entry), without the noise of the reads around it.
func BenchmarkJournalAppend(b *testing.B) {
	c, prefix := testRedis(b)
	j := redis.NewJournal(c, prefix, decoy.DefaultJournalSize)
	for _, batch := range []int{1, 28, 256} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) { benchmarkJournalAppend(b, j, batch) })
	}
}

func benchmarkJournalAppend(b *testing.B, j *redis.Journal, batch int) {
	entry := func(i int) *decoy.JournalEntry {
		return &decoy.JournalEntry{At: time.Now(), Method: "GET", Path: "/p/default/users", Query: "order_by=age&limit=10",
			Headers: map[string]string{"Host": "bench", "Accept-Encoding": "gzip, deflate, br", "X-Request-Id": fmt.Sprint(i)},
			RouteID: "0b0f1c56-61a1-4b5e-9a53-0d0f4a3d3a11", MockID: "648e337a-8387-554d-a85e-4722043881e5",
			Status: 200, DurationMS: 0.123, Client: "127.0.0.1"}
	}
	records := make([][]byte, batch)
	for i := range records {
		records[i] = entry(i).AppendRecord(nil)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	before := cpuTime()
	for b.Loop() {
		if err := j.Append(ctx, map[string][][]byte{decoy.DefaultProjectID: records}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N*batch), "cpu-ns/entry")
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/batch")
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
