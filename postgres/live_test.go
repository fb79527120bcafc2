package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/storetest"
)

func TestLiveStore(t *testing.T) {
	baseURL(t)
	for _, spilled := range []bool{false, true} {
		t.Run(fmt.Sprintf("Spilled=%v", spilled), func(t *testing.T) {
			storetest.RunLive(t, func(t *testing.T, maxWrites int) storetest.LiveBackend {
				_, u := newSchema(t)
				db := open(t, u)
				db.MaxLiveWrites = maxWrites
				if spilled {
					db.SpillDir = t.TempDir()
				}
				return db
			})
		})
	}
}

// Two replicas, each with its pool, write to one mock at once: PostgreSQL
// serialises them on the mock's row.
func TestLiveReplicas(t *testing.T) {
	t.Run("Concurrent", func(t *testing.T) {
		_, u := newSchema(t)
		a, b := open(t, u), open(t, u)
		storetest.RunLiveConcurrent(t, []storetest.LiveBackend{a, b})
	})
	t.Run("Churn", func(t *testing.T) {
		_, u := newSchema(t)
		a, b := open(t, u), open(t, u)
		storetest.RunLiveChurn(t, []storetest.LiveBackend{a, b})
	})
}

// A base is its chunks while it is the base, and no longer: a newer base
// and a reset delete them, and a deleted mock leaves no write and no
// chunk.
func TestLiveBaseChunks(t *testing.T) {
	ctx := context.Background()
	schema, u := newSchema(t)
	db := open(t, u)
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	rows := func(table string) (n int64) {
		t.Helper()
		query(t, fmt.Sprintf(`SELECT count(*) FROM %s.%s`, schema, table), &n)
		return n
	}
	want := func(writes, chunks int64, what string) {
		t.Helper()
		if w, c := rows("mock_writes"), rows("mock_base_chunks"); w != writes || c != chunks {
			t.Errorf("%s: %d writes and %d chunks of bases, want %d and %d", what, w, c, writes, chunks)
		}
	}
	for seq := int64(1); seq <= 4; seq++ {
		w := &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Key: fmt.Sprint(seq), Record: fmt.Appendf(nil, `{"id":%d}`, seq)}
		if err := db.AppendWrite(ctx, testMock.ID, w, 10*seq); err != nil {
			t.Fatal(err)
		}
	}
	big := bytes.Repeat([]byte("x"), 1<<20+1) // two chunks
	if err := db.Compact(ctx, testMock.ID, 2, decoy.Data{Bytes: big}); err != nil {
		t.Fatal(err)
	}
	want(2, 2, "a base of two chunks")
	if err := db.Compact(ctx, testMock.ID, 3, decoy.Data{Bytes: []byte(`[1,2,3]`)}); err != nil {
		t.Fatal(err)
	}
	want(1, 1, "a newer base of one")
	if _, err := db.ResetLive(ctx, testMock.ID); err != nil {
		t.Fatal(err)
	}
	want(0, 0, "a reset")
	w := &decoy.Write{Seq: 6, Op: decoy.WriteDelete, Field: "id", Key: "1"}
	if err := db.AppendWrite(ctx, testMock.ID, w, 2); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx, testMock.ID, 6, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	w = &decoy.Write{Seq: 7, Op: decoy.WriteDelete, Field: "id", Key: "2"}
	if err := db.AppendWrite(ctx, testMock.ID, w, 2); err != nil {
		t.Fatal(err)
	}
	want(1, 1, "before the deletion")
	if err := db.DeleteMock(ctx, testMock.ID); err != nil {
		t.Fatal(err)
	}
	want(0, 0, "the mock deleted")
}
