package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/decoy-mock/decoy/storetest"
)

func TestLiveStore(t *testing.T) {
	storetest.RunLive(t, func(t *testing.T, maxWrites int) storetest.LiveBackend {
		db := open(t, t.TempDir())
		db.MaxLiveWrites = maxWrites
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// BenchmarkAppendWrite appends writes of records of 260 bytes (those of a
// 100,000-record collection of 26 MB), each durable before the next.
func BenchmarkAppendWrite(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		b.Fatal(err)
	}
	record := []byte(`{"id":1,"name":"` + strings.Repeat("x", 240) + `"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w := &decoy.Write{Seq: int64(i) + 1, Op: decoy.WriteUpdate, Field: "id", Key: "1", Record: record}
		if err := db.AppendWrite(ctx, testMock.ID, w, 26_000_000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendWriteParallel appends as BenchmarkAppendWrite does, from
// 16 writers at once, each to a mock of its own.
func BenchmarkAppendWriteParallel(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var next atomic.Int64
	record := []byte(`{"id":1,"name":"` + strings.Repeat("x", 240) + `"}`)
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", next.Add(1))
		if _, err := db.CreateMock(ctx, &decoy.Mock{ID: id, ContentType: "application/json", Status: 200}, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
			b.Error(err)
			return
		}
		for seq := int64(1); pb.Next(); seq++ {
			w := &decoy.Write{Seq: seq, Op: decoy.WriteUpdate, Field: "id", Key: "1", Record: record}
			if err := db.AppendWrite(ctx, id, w, 26_000_000); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
