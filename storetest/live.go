package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// LiveBackend is a store of live data (§12 of the contract), with the
// workspaces whose max_bytes it counts toward and the versions a reset
// goes back to.
type LiveBackend interface {
	TeamBackend
	decoy.VersionStore
	decoy.LiveStore
}

// RunLive runs the suite of decoy.LiveStore. open returns an empty store
// (but for the default workspace and project) for each test, whose logs
// hold at most maxWrites writes after their base (0: the store's default).
func RunLive(t *testing.T, open func(t *testing.T, maxWrites int) LiveBackend) {
	t.Run("Numbering", func(t *testing.T) { testLiveNumbering(t, open(t, 0)) })
	t.Run("Invalid", func(t *testing.T) { testLiveInvalid(t, open(t, 0)) })
	t.Run("NotFound", func(t *testing.T) { testLiveNotFound(t, open(t, 0)) })
	t.Run("CompareAndSet", func(t *testing.T) { testLiveCompareAndSet(t, open(t, 0)) })
	t.Run("WritesPaging", func(t *testing.T) { testLiveWritesPaging(t, open(t, 0)) })
	t.Run("Compact", func(t *testing.T) { testLiveCompact(t, open(t, 0)) })
	t.Run("CompactLarge", func(t *testing.T) { testLiveCompactLarge(t, open(t, 0)) })
	t.Run("Reset", func(t *testing.T) { testLiveReset(t, open(t, 0)) })
	t.Run("ReplaceResets", func(t *testing.T) { testLiveReplaceResets(t, open(t, 0)) })
	t.Run("Snapshot", func(t *testing.T) { testLiveSnapshot(t, open(t, 0)) })
	t.Run("Delete", func(t *testing.T) { testLiveDelete(t, open(t, 0)) })
	t.Run("MaxBytes", func(t *testing.T) { testLiveMaxBytes(t, open(t, 0)) })
	t.Run("Bound", func(t *testing.T) { testLiveBound(t, open(t, 5)) })
	t.Run("Concurrent", func(t *testing.T) {
		s := open(t, 0)
		RunLiveConcurrent(t, []LiveBackend{s})
	})
	t.Run("Churn", func(t *testing.T) {
		s := open(t, 0)
		RunLiveChurn(t, []LiveBackend{s})
	})
}

// liveAt is the time of the writes the suite appends: whole milliseconds,
// as the stores keep them.
var liveAt = time.Date(2026, 11, 27, 10, 30, 0, 123e6, time.UTC)

// write is write number seq of a record of the collection at the data's
// root, its id field "id".
func write(seq int64, op, key, record string) *decoy.Write {
	w := &decoy.Write{Seq: seq, Op: op, Field: "id", Key: key, At: liveAt}
	if record != "" {
		w.Record = []byte(record)
	}
	return w
}

func mustAppend(t *testing.T, s LiveBackend, n int, w *decoy.Write, size int64) {
	t.Helper()
	if err := s.AppendWrite(context.Background(), id(n), w, size); err != nil {
		t.Fatalf("AppendWrite(%d, seq %d): %v", n, w.Seq, err)
	}
}

// appendN appends creates numbered from+1 to to, the live data growing
// by 10 bytes each from size.
func appendN(t *testing.T, s LiveBackend, n int, from, to, size int64) {
	t.Helper()
	for seq := from + 1; seq <= to; seq++ {
		mustAppend(t, s, n, write(seq, decoy.WriteCreate, strconv.FormatInt(seq, 10), fmt.Sprintf(`{"id":%d}`, seq)), size+10*(seq-from))
	}
}

func mustWrites(t *testing.T, s LiveBackend, n int, after int64, limit int) []*decoy.Write {
	t.Helper()
	ws, err := s.Writes(context.Background(), id(n), after, limit)
	if err != nil {
		t.Fatalf("Writes(%d, after %d): %v", n, after, err)
	}
	return ws
}

// seqs lists the numbers of writes.
func seqs(ws []*decoy.Write) []int64 {
	out := []int64{}
	for _, w := range ws {
		out = append(out, w.Seq)
	}
	return out
}

func seqRange(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func mustLive(t *testing.T, s LiveBackend, n int) decoy.LiveState {
	t.Helper()
	st, err := s.Live(context.Background(), id(n))
	if err != nil {
		t.Fatalf("Live(%d): %v", n, err)
	}
	return st
}

func wantLive(t *testing.T, s LiveBackend, n int, want decoy.LiveState) {
	t.Helper()
	if got := mustLive(t, s, n); got != want {
		t.Errorf("Live(%d) = %+v, want %+v", n, got, want)
	}
}

// liveBase returns a mock's base, read whole.
func liveBase(t *testing.T, s LiveBackend, n int) (data string, seq int64, ok bool) {
	t.Helper()
	d, seq, ok, err := s.LiveBase(context.Background(), id(n))
	if err != nil {
		t.Fatalf("LiveBase(%d): %v", n, err)
	}
	if !ok {
		if d.File != nil || d.Bytes != nil {
			t.Errorf("LiveBase(%d) without a base gave data", n)
		}
		return "", seq, false
	}
	return read(t, d), seq, true
}

func wantBase(t *testing.T, s LiveBackend, n int, data string, seq int64, ok bool) {
	t.Helper()
	gotData, gotSeq, gotOK := liveBase(t, s, n)
	if gotData != data || gotSeq != seq || gotOK != ok {
		t.Errorf("LiveBase(%d) = %.40q, %d, %v; want %.40q, %d, %v", n, gotData, gotSeq, gotOK, data, seq, ok)
	}
}

func mustFind(t *testing.T, s LiveBackend, n int) *decoy.Mock {
	t.Helper()
	m, err := s.FindMock(context.Background(), id(n))
	if err != nil {
		t.Fatalf("FindMock(%d): %v", n, err)
	}
	return m
}

// A mock's writes are numbered from 1, kept in order field for field and
// byte for byte, and give the mock its LiveSeq everywhere a mock is read;
// they change its UpdatedAt, not its Version, data or versions.
func testLiveNumbering(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	data := `[{"id":1}]`
	m := create(t, s, 1, data)
	if m.LiveSeq != 0 {
		t.Errorf("a new mock's LiveSeq = %d", m.LiveSeq)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 0, BaseSeq: 0, Size: int64(len(data))})
	wantBase(t, s, 1, "", 0, false)
	if ws := mustWrites(t, s, 1, 0, 10); len(ws) != 0 {
		t.Errorf("a new mock has writes: %v", seqs(ws))
	}

	before := time.Now().Add(-time.Millisecond)
	in := []*decoy.Write{
		{Seq: 1, Op: decoy.WriteCreate, Items: "data.users", Field: "meta.id", Key: `"a7"`, Record: []byte(`{"meta":{"id":"a7"},  "n": 1.50, "s":"\u00e9"}`), At: liveAt},
		{Seq: 2, Op: decoy.WriteUpdate, Items: "data.users", Field: "meta.id", Key: `"a7"`, Record: []byte(`{"meta":{"id":"a7"},"n":2}`), At: liveAt.Add(time.Second)},
		{Seq: 3, Op: decoy.WriteReplace, Items: "data.users", Field: "meta.id", Key: `"a7"`, Record: []byte(`{"meta":{"id":"a7"}}`), At: liveAt.Add(2 * time.Second)},
		{Seq: 4, Op: decoy.WriteDelete, Items: "data.users", Field: "meta.id", Key: `"a7"`, At: liveAt.Add(3 * time.Second)},
		{Seq: 5, Op: decoy.WriteCreate, Field: "id", Key: "42", Record: []byte(`{"id":42}`)}, // At left to the store
	}
	for i, w := range in {
		mustAppend(t, s, 1, w, int64(100+i))
	}
	got := mustWrites(t, s, 1, 0, 10)
	if len(got) != len(in) {
		t.Fatalf("Writes = %v, want 1 to 5", seqs(got))
	}
	for i, w := range got {
		want := *in[i]
		if i == 4 {
			if w.At.Before(before) || w.At.Location() != time.UTC {
				t.Errorf("a write given no time has At %v, want the store's clock's, in UTC", w.At)
			}
			want.At = w.At
		}
		if w.Seq != want.Seq || w.Op != want.Op || w.Items != want.Items || w.Field != want.Field || w.Key != want.Key ||
			!bytes.Equal(w.Record, want.Record) || (w.Record == nil) != (want.Record == nil) || !w.At.Equal(want.At) {
			t.Errorf("write %d = %+v (record %q), want %+v (record %q)", i+1, w, w.Record, want, want.Record)
		}
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 5, BaseSeq: 0, Size: 104})
	wantBase(t, s, 1, "", 0, false)

	// LiveSeq everywhere; the mock's Version and data are unchanged.
	found := mustFind(t, s, 1)
	if found.LiveSeq != 5 || found.Version != m.Version || found.UpdatedAt.Before(m.UpdatedAt) || found.Size != int64(len(data)) {
		t.Errorf("FindMock after 5 writes: LiveSeq %d, Version %d (was %d), UpdatedAt %v (was %v), Size %d",
			found.LiveSeq, found.Version, m.Version, found.UpdatedAt, m.UpdatedAt, found.Size)
	}
	fm, d, err := s.FindMockData(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, d); got != data || fm.LiveSeq != 5 || fm.Version != m.Version {
		t.Errorf("FindMockData after writes: %q, LiveSeq %d, Version %d; want the current version's data, 5, %d", got, fm.LiveSeq, fm.Version, m.Version)
	}
	list, _, err := s.ListMocks(ctx, "", 10)
	if err != nil || len(list) != 1 || list[0].LiveSeq != 5 {
		t.Errorf("ListMocks: %v, %v; want LiveSeq 5", list, err)
	}
	name := "renamed"
	if upd, err := s.UpdateMock(ctx, id(1), decoy.MockUpdate{Name: &name}); err != nil || upd.LiveSeq != 5 {
		t.Errorf("UpdateMock: %+v, %v; want LiveSeq 5", upd, err)
	}
	if vs, err := s.MockVersions(ctx, id(1)); err != nil || len(vs) != 1 {
		t.Errorf("versions after writes: %v, %v; writes make no version", vs, err)
	}
	// Another mock's numbers are its own.
	create(t, s, 2, "[]")
	mustAppend(t, s, 2, write(1, decoy.WriteCreate, "1", `{"id":1}`), 10)
	if ws := mustWrites(t, s, 2, 0, 10); len(ws) != 1 || ws[0].Seq != 1 {
		t.Errorf("the other mock's writes: %v", seqs(ws))
	}
}

func testLiveInvalid(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	for _, tc := range []struct {
		name string
		w    *decoy.Write
		size int64
	}{
		{"UnknownOp", write(1, "upsert", "1", `{"id":1}`), 10},
		{"SeqZero", write(0, decoy.WriteCreate, "1", `{"id":1}`), 10},
		{"NegativeSize", write(1, decoy.WriteCreate, "1", `{"id":1}`), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, s.AppendWrite(ctx, id(1), tc.w, tc.size), decoy.EINVALID)
		})
	}
	_, err := s.Writes(ctx, id(1), 0, 0)
	wantCode(t, err, decoy.EINVALID)
	wantCode(t, s.Compact(ctx, id(1), 1, bytesOf("[]")), decoy.EINVALID) // no write 1
	wantLive(t, s, 1, decoy.LiveState{Size: 2})
}

func testLiveNotFound(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	wantCode(t, s.AppendWrite(ctx, id(9), write(1, decoy.WriteCreate, "1", `{"id":1}`), 10), decoy.ENOTFOUND)
	_, err := s.Writes(ctx, id(9), 0, 10)
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.Live(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	_, _, _, err = s.LiveBase(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	wantCode(t, s.Compact(ctx, id(9), 1, bytesOf("[]")), decoy.ENOTFOUND)
	_, err = s.ResetLive(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
}

// A write whose number does not follow the live data's is refused and
// changes nothing.
func testLiveCompareAndSet(t *testing.T, s LiveBackend) {
	m := create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 2, 2)
	for _, seq := range []int64{1, 2, 4, 10} {
		err := s.AppendWrite(context.Background(), id(1), write(seq, decoy.WriteCreate, "x", `{"id":"x"}`), 1000)
		wantCode(t, err, decoy.ECONFLICT)
	}
	if got := seqs(mustWrites(t, s, 1, 0, 10)); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("writes after refused ones: %v", got)
	}
	if ws := mustWrites(t, s, 1, 0, 10); string(ws[1].Record) != `{"id":2}` {
		t.Errorf("write 2 was overwritten: %q", ws[1].Record)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 2, Size: 22})
	if found := mustFind(t, s, 1); found.LiveSeq != 2 || found.Version != m.Version {
		t.Errorf("mock after refused writes: LiveSeq %d, Version %d", found.LiveSeq, found.Version)
	}
	mustAppend(t, s, 1, write(3, decoy.WriteDelete, "1", ""), 12)
}

func testLiveWritesPaging(t *testing.T, s LiveBackend) {
	create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 25, 2)
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 10, seqRange(1, 10)},
		{10, 10, seqRange(11, 20)},
		{20, 10, seqRange(21, 25)},
		{25, 10, nil},
		{30, 10, nil},
		{0, 100, seqRange(1, 25)},
		{24, 1, []int64{25}},
	} {
		if got := seqs(mustWrites(t, s, 1, tc.after, tc.limit)); fmt.Sprint(got) != fmt.Sprint(append([]int64{}, tc.want...)) {
			t.Errorf("Writes(after %d, limit %d) = %v, want %v", tc.after, tc.limit, got, tc.want)
		}
	}
}

// A compaction makes its data the base and drops the writes it holds;
// the writes after it stay; one that another made unneeded changes
// nothing.
func testLiveCompact(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	m := create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 10, 2)
	if err := s.Compact(ctx, id(1), 6, bytesOf(`[1,2,3,4,5,6]`)); err != nil {
		t.Fatal(err)
	}
	wantBase(t, s, 1, `[1,2,3,4,5,6]`, 6, true)
	wantLive(t, s, 1, decoy.LiveState{Seq: 10, BaseSeq: 6, Size: 102})
	if got := seqs(mustWrites(t, s, 1, 6, 100)); fmt.Sprint(got) != "[7 8 9 10]" {
		t.Errorf("writes after the base: %v", got)
	}
	for _, after := range []int64{0, 5} {
		_, err := s.Writes(ctx, id(1), after, 100)
		wantCode(t, err, decoy.ECONFLICT) // compacted away
	}
	// Stale: a base of 6 exists.
	for _, seq := range []int64{5, 6} {
		if err := s.Compact(ctx, id(1), seq, bytesOf(`"stale"`)); err != nil {
			t.Errorf("a stale compaction to %d: %v", seq, err)
		}
	}
	wantBase(t, s, 1, `[1,2,3,4,5,6]`, 6, true)
	if got := seqs(mustWrites(t, s, 1, 6, 100)); fmt.Sprint(got) != "[7 8 9 10]" {
		t.Errorf("writes after stale compactions: %v", got)
	}
	wantCode(t, s.Compact(ctx, id(1), 11, bytesOf(`"ahead"`)), decoy.EINVALID)

	// Up to the last write: the log is empty, and writes go on after it.
	if err := s.Compact(ctx, id(1), 10, bytesOf(`[1,2,3,4,5,6,7,8,9,10]`)); err != nil {
		t.Fatal(err)
	}
	wantBase(t, s, 1, `[1,2,3,4,5,6,7,8,9,10]`, 10, true)
	if ws := mustWrites(t, s, 1, 10, 100); len(ws) != 0 {
		t.Errorf("writes after a full compaction: %v", seqs(ws))
	}
	appendN(t, s, 1, 10, 11, 102)
	wantLive(t, s, 1, decoy.LiveState{Seq: 11, BaseSeq: 10, Size: 112})
	// An empty base is a base.
	if err := s.Compact(ctx, id(1), 11, bytesOf("")); err != nil {
		t.Fatal(err)
	}
	wantBase(t, s, 1, "", 11, true)
	// Compaction changes neither the mock nor its data.
	found := mustFind(t, s, 1)
	if found.Version != m.Version || found.LiveSeq != 11 {
		t.Errorf("mock after compactions: Version %d (was %d), LiveSeq %d", found.Version, m.Version, found.LiveSeq)
	}
	if d, err := find(t, s, 1); err != nil || d != "[]" {
		t.Errorf("data after compactions: %q, %v", d, err)
	}
}

// A base larger than a chunk or a page is read back byte for byte, and a
// file given with it is left to the caller.
func testLiveCompactLarge(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 3, 2)
	big := make([]byte, 5<<19+7) // 2.5 MiB and a bit
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := s.Compact(ctx, id(1), 2, decoy.Data{Bytes: big}); err != nil {
		t.Fatal(err)
	}
	d, seq, ok, err := s.LiveBase(ctx, id(1))
	if err != nil || !ok || seq != 2 {
		t.Fatalf("LiveBase = %d, %v, %v", seq, ok, err)
	}
	if got := read(t, d); got != string(big) {
		t.Errorf("base of %d bytes read back as %d bytes, not the same", len(big), len(got))
	}
}

// A reset drops the writes and the base under a number of its own: a
// writer or a compaction that computed on the live data before it cannot
// land after it, however many writes follow.
func testLiveReset(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	m := create(t, s, 1, "[]")
	// Nothing live: nothing to reset.
	if r, err := s.ResetLive(ctx, id(1)); err != nil || r.Version != m.Version || r.LiveSeq != 0 {
		t.Errorf("ResetLive of a mock without writes: %+v, %v; want it unchanged", r, err)
	}
	appendN(t, s, 1, 0, 3, 2)
	if err := s.Compact(ctx, id(1), 2, bytesOf(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	r, err := s.ResetLive(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version <= m.Version || r.LiveSeq != 4 || r.Size != 2 {
		t.Errorf("ResetLive = Version %d (was %d), LiveSeq %d, Size %d; want a new Version, LiveSeq 4, the current version's size", r.Version, m.Version, r.LiveSeq, r.Size)
	}
	if found := mustFind(t, s, 1); found.Version != r.Version || found.LiveSeq != 4 {
		t.Errorf("FindMock after a reset: Version %d, LiveSeq %d; want %d, 4", found.Version, found.LiveSeq, r.Version)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 4, BaseSeq: 4, Size: 2})
	wantBase(t, s, 1, "", 4, false)
	_, err = s.Writes(ctx, id(1), 3, 10)
	wantCode(t, err, decoy.ECONFLICT)
	if ws := mustWrites(t, s, 1, 4, 10); len(ws) != 0 {
		t.Errorf("writes after a reset: %v", seqs(ws))
	}
	if d, err := find(t, s, 1); err != nil || d != "[]" {
		t.Errorf("data after a reset: %q, %v", d, err)
	}
	// A writer that held the live data at 3 is refused.
	wantCode(t, s.AppendWrite(ctx, id(1), write(4, decoy.WriteCreate, "4", `{"id":4}`), 12), decoy.ECONFLICT)
	appendN(t, s, 1, 4, 6, 2)
	// A compaction computed before the reset changes nothing.
	if err := s.Compact(ctx, id(1), 3, bytesOf(`[1,2,3]`)); err != nil {
		t.Fatal(err)
	}
	wantBase(t, s, 1, "", 4, false)
	if got := seqs(mustWrites(t, s, 1, 4, 10)); fmt.Sprint(got) != "[5 6]" {
		t.Errorf("writes after the reset: %v", got)
	}
	r2, err := s.ResetLive(ctx, id(1))
	if err != nil || r2.Version <= r.Version || r2.LiveSeq != 7 {
		t.Errorf("a second reset: %+v, %v; want a new Version, LiveSeq 7", r2, err)
	}
	if vs, err := s.MockVersions(ctx, id(1)); err != nil || len(vs) != 1 {
		t.Errorf("versions after resets: %v, %v; a reset makes no version", vs, err)
	}
}

// New data resets the live data, in the same transaction, even when
// there were no writes: a writer that computed on the old data cannot
// append to the new.
func testLiveReplaceResets(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 3, 2)
	if err := s.Compact(ctx, id(1), 2, bytesOf(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	m, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(`[{"id":"new"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if m.LiveSeq != 4 {
		t.Errorf("ReplaceMockData: LiveSeq %d, want 4", m.LiveSeq)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 4, BaseSeq: 4, Size: 14})
	wantBase(t, s, 1, "", 4, false)
	_, err = s.Writes(ctx, id(1), 3, 10)
	wantCode(t, err, decoy.ECONFLICT)
	// Without writes since: a number all the same.
	m2, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	if m2.LiveSeq != 5 || m2.Version <= m.Version {
		t.Errorf("ReplaceMockData without writes: LiveSeq %d, Version %d (was %d); want 5, a new Version", m2.LiveSeq, m2.Version, m.Version)
	}
	wantCode(t, s.AppendWrite(ctx, id(1), write(5, decoy.WriteCreate, "1", `{"id":1}`), 10), decoy.ECONFLICT)
	mustAppend(t, s, 1, write(6, decoy.WriteCreate, "1", `{"id":1}`), 10)
	wantLive(t, s, 1, decoy.LiveState{Seq: 6, BaseSeq: 5, Size: 10})
}

// Saving the live data as a version (§12.2) is ReplaceMockData with its
// bytes: they become the current version, and the log starts over.
func testLiveSnapshot(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, `[{"id":1}]`)
	mustAppend(t, s, 1, write(1, decoy.WriteCreate, "2", `{"id":2}`), 19)
	mustAppend(t, s, 1, write(2, decoy.WriteUpdate, "1", `{"id":1,"a":true}`), 28)
	live := `[{"id":1,"a":true},{"id":2}]`
	// A snapshot of live data that moved on since changes nothing.
	stale := int64(1)
	if _, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(`[]`), ETag: `"x"`, IfLiveSeq: &stale}); decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Fatalf("snapshot of live data number 1 at 2: %v, want ECONFLICT", err)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 2, BaseSeq: 0, Size: 28})
	seq := int64(2)
	m, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(live), ETag: `"live"`, IfLiveSeq: &seq})
	if err != nil {
		t.Fatal(err)
	}
	if m.Size != int64(len(live)) || m.ETag != `"live"` || m.LiveSeq != 3 {
		t.Errorf("snapshot: Size %d, ETag %s, LiveSeq %d", m.Size, m.ETag, m.LiveSeq)
	}
	vs, err := s.MockVersions(ctx, id(1))
	if err != nil || len(vs) != 2 || !vs[0].Current || vs[0].Size != int64(len(live)) || vs[1].Size != 10 {
		t.Fatalf("versions after a snapshot: %+v, %v", vs, err)
	}
	if d, err := find(t, s, 1); err != nil || d != live {
		t.Errorf("data after a snapshot: %q, %v", d, err)
	}
	wantLive(t, s, 1, decoy.LiveState{Seq: 3, BaseSeq: 3, Size: int64(len(live))})
	if ws := mustWrites(t, s, 1, 3, 10); len(ws) != 0 {
		t.Errorf("writes after a snapshot: %v", seqs(ws))
	}
	mustAppend(t, s, 1, write(4, decoy.WriteDelete, "2", ""), 18)
	// The version before the writes is kept as it was.
	if _, d, err := versionData(t, s, 1, 1); err != nil || d != `[{"id":1}]` {
		t.Errorf("version 1 after a snapshot: %q, %v", d, err)
	}
}

// A deleted mock leaves nothing of its live data: a mock made again with
// its id starts afresh.
func testLiveDelete(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 5, 2)
	if err := s.Compact(ctx, id(1), 3, bytesOf(`[1,2,3]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.AppendWrite(ctx, id(1), write(6, decoy.WriteCreate, "6", `{"id":6}`), 10), decoy.ENOTFOUND)
	_, err := s.Writes(ctx, id(1), 3, 10)
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.Live(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
	_, _, _, err = s.LiveBase(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)

	create(t, s, 1, "[0]")
	wantLive(t, s, 1, decoy.LiveState{Size: 3})
	wantBase(t, s, 1, "", 0, false)
	if ws := mustWrites(t, s, 1, 0, 10); len(ws) != 0 {
		t.Errorf("a mock made again has the writes of the one deleted: %v", seqs(ws))
	}
	mustAppend(t, s, 1, write(1, decoy.WriteCreate, "1", `{"id":1}`), 12)
}

// Live data counts toward max_bytes at its size, once apart from the
// current version; only a write that grows the live data is held to the
// limit; compaction changes nothing of the count, and a reset or new data
// gives the bytes back.
func testLiveMaxBytes(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	w, err := s.CreateWorkspace(ctx, &decoy.Workspace{Name: "acme", Limits: decoy.WorkspaceLimits{MaxBytes: ptr(int64(35))}}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := defaultProject(t, s, w.ID).ID
	createIn(t, s, 1, p, "m", "0123456789") // 10 bytes
	usage := func(want int64) {
		t.Helper()
		if _, n, err := s.WorkspaceUsage(ctx, w.ID); err != nil || n != want {
			t.Errorf("WorkspaceUsage bytes = %d, %v; want %d", n, err, want)
		}
	}
	limit := func(n int64) {
		t.Helper()
		if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(seq, size int64) {
		t.Helper()
		err := s.AppendWrite(ctx, id(1), write(seq, decoy.WriteCreate, "x", `{"id":"x"}`), size)
		wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_bytes")
		if st := mustLive(t, s, 1); st.Seq != seq-1 {
			t.Errorf("a write past max_bytes was stored: live data at %d", st.Seq)
		}
	}
	usage(10)
	mustAppend(t, s, 1, write(1, decoy.WriteCreate, "a", `{"id":"a"}`), 12) // 10 + 12
	usage(22)
	mustAppend(t, s, 1, write(2, decoy.WriteCreate, "b", `{"id":"b"}`), 25) // 35: the limit exactly
	usage(35)
	refused(3, 26)
	mustAppend(t, s, 1, write(3, decoy.WriteDelete, "a", ""), 20) // shrinks
	usage(30)
	// Under a limit lowered below what is held, what does not grow the
	// live data passes.
	limit(5)
	mustAppend(t, s, 1, write(4, decoy.WriteReplace, "b", `{"id":"b"}`), 20)
	mustAppend(t, s, 1, write(5, decoy.WriteDelete, "b", ""), 19)
	refused(6, 21)
	if err := s.Compact(ctx, id(1), 5, bytesOf("0123456789abcdefghi")); err != nil {
		t.Fatal(err)
	}
	usage(29) // the base is the live data: counted once
	// A snapshot drops the live data it saves: it fits where the live
	// data did.
	limit(29)
	if _, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf("0123456789abcdefghi")}); err != nil {
		t.Errorf("a snapshot of the live data at the limit: %v", err)
	}
	usage(29) // versions of 10 and 19
	// The first write sets the live data apart from the current version:
	// it counts whole from then on, though it shrank.
	mustAppend(t, s, 1, write(7, decoy.WriteDelete, "c", ""), 18)
	usage(47)
	refused(8, 19)
	if _, err := s.ResetLive(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	usage(29)
	// Other workspaces' live data is theirs.
	createIn(t, s, 2, "", "other", "[]")
	mustAppend(t, s, 2, write(1, decoy.WriteCreate, "1", `{"id":1,"pad":"0123456789012345678901234567890123456789"}`), 100)
	usage(29)
}

// A mock's log holds a bounded number of writes after its base: past it,
// writes wait for a compaction.
func testLiveBound(t *testing.T, s LiveBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	appendN(t, s, 1, 0, 5, 2)
	full := func(seq int64) {
		t.Helper()
		err := s.AppendWrite(ctx, id(1), write(seq, decoy.WriteCreate, "x", `{"id":"x"}`), 1000)
		wantCode(t, err, decoy.EUNAVAILABLE)
		if st := mustLive(t, s, 1); st.Seq != seq-1 {
			t.Errorf("a write past the log's bound was stored: live data at %d", st.Seq)
		}
	}
	full(6)
	if err := s.Compact(ctx, id(1), 3, bytesOf(`[1,2,3]`)); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 5, 8, 52) // 4 to 8 after the base of 3: 5
	full(9)
	if _, err := s.ResetLive(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 9, 14, 2) // 10 to 14 after the reset, numbered 9
	full(15)
}

// liveRecord is a record of the collection RunLiveConcurrent's writers
// append to: its id, assigned as one more than the largest, and its
// writer.
type liveRecord struct {
	ID int `json:"id"`
	By int `json:"by"`
}

// liveReplica is a writer's copy of a mock's live data, as a server
// replica holds it: the records, at a number.
type liveReplica struct {
	s    LiveBackend
	n    int
	recs []liveRecord
	seq  int64
}

func (r *liveReplica) doc() []byte {
	b, err := json.Marshal(r.recs)
	if err != nil {
		panic(err)
	}
	return b
}

// load reads the live data whole: the base (the current version's data
// when no compaction wrote one) and the writes after it.
func (r *liveReplica) load(ctx context.Context) error {
	for {
		m, d, err := r.s.FindMockData(ctx, id(r.n))
		if err != nil {
			return err
		}
		doc, err := readAll(d)
		if err != nil {
			return err
		}
		base, seq, ok, err := r.s.LiveBase(ctx, id(r.n))
		if err != nil {
			return err
		}
		if ok {
			if doc, err = readAll(base); err != nil {
				return err
			}
		} else if seq > m.LiveSeq {
			continue // new data since FindMockData: read it again
		}
		r.recs = nil
		if err := json.Unmarshal(doc, &r.recs); err != nil {
			return fmt.Errorf("base at %d: %w", seq, err)
		}
		r.seq = seq
		if err := r.catchUp(ctx); decoy.ErrorCode(err) == decoy.ECONFLICT {
			continue // compacted again meanwhile
		} else if err != nil {
			return err
		}
		return nil
	}
}

// catchUp applies the writes after the replica's number; ECONFLICT when
// they were compacted away.
func (r *liveReplica) catchUp(ctx context.Context) error {
	for {
		ws, err := r.s.Writes(ctx, id(r.n), r.seq, 7)
		if err != nil {
			return err
		}
		if len(ws) == 0 {
			return nil
		}
		for _, w := range ws {
			if w.Seq != r.seq+1 {
				return fmt.Errorf("write %d follows %d", w.Seq, r.seq)
			}
			var rec liveRecord
			if err := json.Unmarshal(w.Record, &rec); err != nil {
				return err
			}
			r.recs, r.seq = append(r.recs, rec), w.Seq
		}
	}
}

// create appends a record, its id one more than the largest, catching up
// and trying again until it lands; it returns the record.
func (r *liveReplica) create(ctx context.Context, by int) (liveRecord, error) {
	for {
		next := 1
		for _, rec := range r.recs {
			next = max(next, rec.ID+1)
		}
		rec := liveRecord{ID: next, By: by}
		b, _ := json.Marshal(rec)
		w := &decoy.Write{Seq: r.seq + 1, Op: decoy.WriteCreate, Field: "id", Key: strconv.Itoa(next), Record: b}
		size := int64(len(r.doc()) + len(b) + 1)
		err := r.s.AppendWrite(ctx, id(r.n), w, size)
		switch decoy.ErrorCode(err) {
		case "":
			r.recs, r.seq = append(r.recs, rec), w.Seq
			return rec, nil
		case decoy.ECONFLICT:
			// Another wrote first: apply what it wrote, or the base it
			// was compacted into.
			err := r.catchUp(ctx)
			if decoy.ErrorCode(err) == decoy.ECONFLICT {
				err = r.load(ctx)
			}
			if err != nil {
				return rec, err
			}
		default:
			return rec, err
		}
	}
}

func readAll(d decoy.Data) ([]byte, error) {
	if d.File == nil {
		return d.Bytes, nil
	}
	defer d.File.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(d.File)
	return b.Bytes(), err
}

// RunLiveConcurrent has writers on stores (replicas of one store, or
// the one store more than once) append records to one mock's collection
// at once, each computing its write on its own copy of the live data and
// catching up when another wrote first, while another compacts: no
// acknowledged write is lost, no number is given twice, and no two
// records get the same id.
func RunLiveConcurrent(t *testing.T, stores []LiveBackend) {
	ctx := context.Background()
	const writers, each = 8, 25
	create(t, stores[0], 1, "[]")
	var mu sync.Mutex
	acked := map[liveRecord]bool{}
	errs := make(chan error, writers+1)
	// kick wakes the compactor: writers kick it as they go.
	kick := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			r := &liveReplica{s: stores[g%len(stores)], n: 1}
			if err := r.load(ctx); err != nil {
				errs <- err
				return
			}
			for range each {
				rec, err := r.create(ctx, g)
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", g, err)
					return
				}
				mu.Lock()
				acked[rec] = true
				mu.Unlock()
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		})
	}
	done := make(chan struct{})
	var compactor sync.WaitGroup
	compactions := 0
	compactor.Go(func() {
		r := &liveReplica{s: stores[len(stores)-1], n: 1}
		for {
			select {
			case <-done:
				return
			case <-kick:
			}
			if err := r.load(ctx); err != nil {
				errs <- fmt.Errorf("compactor: %w", err)
				return
			}
			if r.seq > 0 {
				if err := r.s.Compact(ctx, id(1), r.seq, decoy.Data{Bytes: r.doc()}); err != nil {
					errs <- fmt.Errorf("compactor: %w", err)
					return
				}
				compactions++
			}
		}
	})
	wg.Wait()
	close(done)
	compactor.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	r := &liveReplica{s: stores[0], n: 1}
	if err := r.load(ctx); err != nil {
		t.Fatal(err)
	}
	if r.seq != writers*each || len(r.recs) != writers*each {
		t.Errorf("live data at %d with %d records, want %d of each", r.seq, len(r.recs), writers*each)
	}
	for i, rec := range r.recs {
		if rec.ID != i+1 {
			t.Fatalf("record %d has id %d: ids %v", i, rec.ID, r.recs)
		}
		if !acked[rec] {
			t.Errorf("record %+v was not acknowledged", rec)
		}
		delete(acked, rec)
	}
	for rec := range acked {
		t.Errorf("acknowledged record %+v was lost", rec)
	}
	if st := mustLive(t, stores[0], 1); st.Seq != writers*each {
		t.Errorf("Live = %+v, want the live data at %d", st, writers*each)
	}
	t.Logf("%d compactions ran beside the writers", compactions)
}

// RunLiveChurn has writers and a compactor on stores (as
// RunLiveConcurrent) go on while the live data is reset and replaced, then
// while the mock is deleted: each ends without an error but the mock's
// absence once it is deleted (no deadlock, no write on a base a reset
// dropped: no two records with one id), and numbers never go back.
func RunLiveChurn(t *testing.T, stores []LiveBackend) {
	ctx := context.Background()
	const writers = 4
	create(t, stores[0], 1, "[]")
	stop := make(chan struct{})
	kick := make(chan struct{}, 1)
	errs := make(chan error, writers+2)
	var wg sync.WaitGroup
	run := func(name string, s LiveBackend, step func(r *liveReplica) error) {
		wg.Go(func() {
			r := &liveReplica{s: s, n: 1}
			err := r.load(ctx)
			for err == nil {
				select {
				case <-stop:
					return
				default:
				}
				err = step(r)
			}
			if decoy.ErrorCode(err) != decoy.ENOTFOUND {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	for g := range writers {
		run(fmt.Sprint("writer ", g), stores[g%len(stores)], func(r *liveReplica) error {
			_, err := r.create(ctx, g)
			select {
			case kick <- struct{}{}:
			default:
			}
			return err
		})
	}
	run("compactor", stores[len(stores)-1], func(r *liveReplica) error {
		select {
		case <-stop:
			return nil
		case <-kick:
		}
		if err := r.load(ctx); err != nil {
			return err
		}
		return r.s.Compact(ctx, id(1), r.seq, decoy.Data{Bytes: r.doc()})
	})
	var last int64
	for i := range 6 {
		select {
		case <-kick: // a write came: reset it
		case err := <-errs:
			close(stop)
			t.Fatal(err)
		}
		select {
		case kick <- struct{}{}: // for the compactor
		default:
		}
		var m *decoy.Mock
		var err error
		if i%2 == 0 {
			m, err = stores[i%len(stores)].ResetLive(ctx, id(1))
		} else {
			m, err = stores[i%len(stores)].ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(fmt.Sprintf(`[{"id":%d,"by":-1}]`, 1000*i))})
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.LiveSeq < last {
			t.Errorf("the live data's number went back from %d to %d", last, m.LiveSeq)
		}
		last = m.LiveSeq
	}
	r := &liveReplica{s: stores[0], n: 1}
	if err := r.load(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, rec := range r.recs {
		if seen[rec.ID] {
			t.Errorf("two records with id %d in the live data at %d", rec.ID, r.seq)
		}
		seen[rec.ID] = true
	}
	if err := stores[0].DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
