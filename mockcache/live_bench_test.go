package mockcache_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
)

// benchRecords is the collection of the write benchmarks: 100,000 records
// of about 260 bytes (26 MB), as §12.2 measures.
const benchRecords = 100_000

var benchCities = []string{"Paris", "Lyon", "Berlin", "Madrid", "Rome", "Oslo", "Lisbon", "Vienna"}

// benchRecord returns record id of the benchmarks' collection.
func benchRecord(id int, v string) []byte {
	return fmt.Appendf(nil, `{"id":%d,"name":"User %d","email":"user%d@example.com","city":"%s","age":%d,`+
		`"address":{"street":"%d Long Street Name","zip":"%05d","country":"Somewhere"},"active":true,`+
		`"tags":["alpha","beta","gamma"],"bio":"%s lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod"}`,
		id, id, id, benchCities[id%len(benchCities)], 20+id%50, id%1000, id%100000, v)
}

func benchData(n int) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.Write(benchRecord(i, "v0"))
	}
	b.WriteByte(']')
	return b.String()
}

var benchDataCache string

func benchEntry(b *testing.B) *mockcache.Entry {
	if benchDataCache == "" {
		benchDataCache = benchData(benchRecords)
	}
	return entryOf(b, benchDataCache, 0)
}

// itemQuery is the query of an item route reading record id.
func itemQuery(id int) *query.Query {
	return query.Item(query.Scope{Conditions: []query.Condition{query.Bound(query.NewField([]string{"id"}), strconv.Itoa(id))}})
}

// writeLoop applies n writes made by next to e, as the write path does:
// the record found first (its current text merged by the caller), then
// the write applied; each entry replaces the one before.
func writeLoop(b *testing.B, e *mockcache.Entry, n int, next func(seq int64, e *mockcache.Entry) *decoy.Write) *mockcache.Entry {
	for range n {
		w := next(e.LiveSeq()+1, e)
		f, err := e.Apply(w)
		if err != nil {
			b.Fatal(err)
		}
		e.Release()
		e = f
	}
	return e
}

// patchOf returns the replace of a random record of e, found first as the
// write path finds it.
func patchOf(rng *rand.Rand) func(seq int64, e *mockcache.Entry) *decoy.Write {
	return func(seq int64, e *mockcache.Entry) *decoy.Write {
		id := 1 + rng.IntN(benchRecords)
		key := []byte(strconv.Itoa(id))
		doc, err := e.Collection("")
		if err != nil {
			panic(err)
		}
		if _, ok := query.FindRecord(doc, []string{"id"}, key); !ok {
			panic("not found")
		}
		return &decoy.Write{Seq: seq, Op: decoy.WriteUpdate, Field: "id", Key: string(key), Record: benchRecord(id, "v"+strconv.FormatInt(seq, 10))}
	}
}

// BenchmarkApplyUpdate measures a PATCH of one record of 100,000, as the
// engine sees it: the record found, the write applied.
func BenchmarkApplyUpdate(b *testing.B) {
	e := benchEntry(b)
	rng := rand.New(rand.NewPCG(1, 2))
	e = writeLoop(b, e, 1, patchOf(rng))
	b.ResetTimer()
	e = writeLoop(b, e, b.N, patchOf(rng))
	b.StopTimer()
	e.Release()
}

// BenchmarkApplyCreate measures a POST to a collection of 100,000.
func BenchmarkApplyCreate(b *testing.B) {
	e := benchEntry(b)
	next := benchRecords + 1
	create := func(seq int64, e *mockcache.Entry) *decoy.Write {
		doc, _ := e.Collection("")
		query.NextIntID(doc, []string{"id"})
		next++
		return &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Record: benchRecord(next, "new")}
	}
	e = writeLoop(b, e, 1, create)
	b.ResetTimer()
	e = writeLoop(b, e, b.N, create)
	b.StopTimer()
	e.Release()
}

// BenchmarkApplyDelete measures a DELETE from a collection of 100,000.
func BenchmarkApplyDelete(b *testing.B) {
	e := benchEntry(b)
	rng := rand.New(rand.NewPCG(3, 4))
	perm := rng.Perm(benchRecords)
	k := 0
	del := func(seq int64, e *mockcache.Entry) *decoy.Write {
		id := perm[k%len(perm)] + 1
		k++
		return &decoy.Write{Seq: seq, Op: decoy.WriteDelete, Field: "id", Key: strconv.Itoa(id)}
	}
	if b.N >= benchRecords {
		b.Skip("more deletes than records")
	}
	e = writeLoop(b, e, 1, del)
	b.ResetTimer()
	e = writeLoop(b, e, b.N, del)
	b.StopTimer()
	e.Release()
}

// readItem reads record id of e as an item route does, and checks it.
func readItem(b *testing.B, e *mockcache.Entry, id int) {
	a := e.Answer(itemQuery(id), "", false, "")
	if a.NotFound {
		b.Fatalf("record %d not found", id)
	}
	var buf bytes.Buffer
	a.WriteBody(&buf)
}

// BenchmarkReadAfterWrites measures a small read (one record by id, as an
// item route reads it) before writes, after 10,000 of them, and between
// writes (a write, then a read).
func BenchmarkReadAfterWrites(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	b.Run("before", func(b *testing.B) {
		e := benchEntry(b)
		defer e.Release()
		readItem(b, e, 1)
		b.ResetTimer()
		for range b.N {
			readItem(b, e, 1+rng.IntN(benchRecords))
		}
	})
	b.Run("after10000", func(b *testing.B) {
		e := benchEntry(b)
		e = writeLoop(b, e, 10_000, patchOf(rng))
		defer e.Release()
		readItem(b, e, 1)
		b.ResetTimer()
		for range b.N {
			readItem(b, e, 1+rng.IntN(benchRecords))
		}
	})
	b.Run("afterEachWrite", func(b *testing.B) {
		// The first read of each state a write made: only the reads are
		// timed.
		e := benchEntry(b)
		patch := patchOf(rng)
		e = writeLoop(b, e, 1, patch)
		readItem(b, e, 1)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			e = writeLoop(b, e, 1, patch)
			e.Doc.CarryOver()
			b.StartTimer()
			readItem(b, e, 1+rng.IntN(benchRecords))
		}
		b.StopTimer()
		e.Release()
	})
	b.Run("during1500WritesPerSecond", func(b *testing.B) { readsDuringWrites(b, rng, time.Second/1500) })
	b.Run("duringWrites", func(b *testing.B) { readsDuringWrites(b, rng, 0) })
}

// readsDuringWrites measures reads of the newest state while a writer
// applies PATCHes, one every interval (0: as fast as it can).
func readsDuringWrites(b *testing.B, rng *rand.Rand, interval time.Duration) {
	{
		var cur atomic.Pointer[mockcache.Entry]
		e := benchEntry(b)
		wrng := rand.New(rand.NewPCG(7, 8))
		e = writeLoop(b, e, 1, patchOf(wrng))
		readItem(b, e, 1)
		cur.Store(e)
		stop := make(chan struct{})
		done := make(chan int)
		go func() {
			patch, writes := patchOf(wrng), 0
			tick := time.NewTicker(max(interval, time.Nanosecond))
			defer tick.Stop()
			for {
				select {
				case <-stop:
					done <- writes
					return
				default:
				}
				if interval > 0 {
					<-tick.C
				}
				e := cur.Load()
				f, err := e.Apply(patch(e.LiveSeq()+1, e))
				if err != nil {
					panic(err)
				}
				f.Doc.CarryOver() // as Cache.PutLive does
				cur.Store(f)      // heap documents: the old one goes with the collector
				writes++
			}
		}()
		b.ResetTimer()
		for range b.N {
			readItem(b, cur.Load(), 1+rng.IntN(benchRecords))
		}
		b.StopTimer()
		close(stop)
		b.ReportMetric(float64(<-done)/b.Elapsed().Seconds(), "writes/s")
	}
}

// BenchmarkCacheWrite measures the engine's share of a PATCH through the
// cache, the store's append aside: the entry got, the record found, the
// write applied, the new entry installed (and what the one before kept
// carried over to it), then a read of another record by id.
func BenchmarkCacheWrite(b *testing.B) {
	if benchDataCache == "" {
		benchDataCache = benchData(benchRecords)
	}
	s := liveStore(b, benchDataCache)
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	patch := patchOf(rng)
	step := func() {
		e, err := c.Get(ctx, liveID)
		if err != nil {
			b.Fatal(err)
		}
		f, err := e.Apply(patch(e.LiveSeq()+1, e))
		if err != nil {
			b.Fatal(err)
		}
		c.PutLive(f)
		f.Release()
		e.Release()
		g, err := c.Get(ctx, liveID)
		if err != nil {
			b.Fatal(err)
		}
		readItem(b, g, 1+rng.IntN(benchRecords))
		g.Release()
	}
	step()
	b.ResetTimer()
	for range b.N {
		step()
	}
}
