package decoy_test

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// sameEntry reports how got differs from want ("" when it does not): At
// to the nanosecond, DurationMS to the bit (a NaN too), the rest as is.
func sameEntry(got, want *decoy.JournalEntry) string {
	g, w := *got, *want
	if !g.At.Equal(w.At) || g.At.Location() != time.UTC {
		return fmt.Sprintf("at %v, want %v in UTC", g.At, w.At)
	}
	if math.Float64bits(g.DurationMS) != math.Float64bits(w.DurationMS) {
		return fmt.Sprintf("duration %v, want %v", g.DurationMS, w.DurationMS)
	}
	g.At, w.At, g.DurationMS, w.DurationMS = time.Time{}, time.Time{}, 0, 0
	if !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("\n got %+v\nwant %+v", g, w)
	}
	return ""
}

// roundTrip checks that e's record reads back as e (its ID aside).
func roundTrip(t testing.TB, e *decoy.JournalEntry) {
	t.Helper()
	rec := e.AppendRecord([]byte("kept"))
	if !bytes.HasPrefix(rec, []byte("kept")) {
		t.Fatal("AppendRecord changed what b held")
	}
	back, err := decoy.ParseJournalRecord(rec[len("kept"):])
	if err != nil {
		t.Fatalf("%q: %v", rec, err)
	}
	want := *e
	want.ID = ""
	if diff := sameEntry(back, &want); diff != "" {
		t.Fatal(diff)
	}
}

// Every field of an entry comes back from its record: an entry with each
// field set (a field added to JournalEntry is set too, and must be kept)
// and entries of every kind of value.
func TestJournalRecord(t *testing.T) {
	full := fullEntry(t, " <&> \"é\"\x00", "", false)
	roundTrip(t, &full)
	for _, e := range []decoy.JournalEntry{
		{},
		{ID: "5-1", Headers: map[string]string{}},
		{At: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), Status: -1, DurationMS: math.NaN()},
		{At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Status: math.MaxInt, DurationMS: math.Inf(-1)},
		{At: time.Unix(-1, 5).UTC(), Status: math.MinInt, DurationMS: math.Copysign(0, -1)},
		{Body: string(make([]byte, decoy.MaxJournalBody)), Headers: map[string]string{"": "", "\xff": "\u2028"}},
	} {
		roundTrip(t, &e)
	}
}

// A record is written from a request's parts as from its entry: the
// values of a header joined, a name given twice kept once with its later
// value.
func TestJournalRecordParts(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 5, time.UTC)
	r := decoy.JournalRecord{At: at, Method: "POST", Path: "/p/x/users", Query: "a=1", BodyCut: true, RouteID: "r", MockID: "m",
		Rule: "slow", Status: 201, DurationMS: 0.25, Client: "127.0.0.1", Forwarded: true}
	b := r.Append(nil, []byte(`{"a":1}`), 4)
	b = decoy.AppendJournalHeader(b, "Host", "example.com")
	b = decoy.AppendJournalHeader(b, "Accept", "a/b", "c/d", "")
	b = decoy.AppendJournalHeader(b, "X-None")
	b = decoy.AppendJournalHeader(b, "Host", "later")
	got, err := decoy.ParseJournalRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	want := &decoy.JournalEntry{At: at, Method: "POST", Path: "/p/x/users", Query: "a=1", Body: `{"a":1}`, BodyCut: true, RouteID: "r", MockID: "m",
		Rule: "slow", Status: 201, DurationMS: 0.25, Client: "127.0.0.1", Forwarded: true,
		Headers: map[string]string{"Host": "later", "Accept": "a/b, c/d, ", "X-None": ""}}
	if diff := sameEntry(got, want); diff != "" {
		t.Error(diff)
	}
	if none, err := decoy.ParseJournalRecord(r.Append(nil, nil, -1)); err != nil || none.Headers != nil {
		t.Errorf("no headers: %v %v", none.Headers, err)
	}
}

// What is not a whole record is refused: cut anywhere, longer, of another
// version, claiming more headers than it holds.
func TestJournalRecordRefused(t *testing.T) {
	e := &decoy.JournalEntry{At: time.Now(), Method: "GET", Path: "/x", Headers: map[string]string{"A": "1"}, Status: 200}
	rec := e.AppendRecord(nil)
	for i := range len(rec) {
		if _, err := decoy.ParseJournalRecord(rec[:i]); err == nil {
			t.Errorf("cut at %d of %d: read", i, len(rec))
		}
	}
	for _, bad := range [][]byte{append(rec[:len(rec):len(rec)], 0), append([]byte{2}, rec[1:]...), nil,
		append((&decoy.JournalRecord{}).Append(nil, nil, 1<<40), 0, 0)} {
		if _, err := decoy.ParseJournalRecord(bad); err == nil {
			t.Errorf("%q: read", bad)
		}
	}
}

// Writing a request's record allocates nothing once its buffer is large
// enough.
func TestJournalRecordAllocs(t *testing.T) {
	r := decoy.JournalRecord{At: time.Now(), Method: "GET", Path: "/p/default/users", Query: "limit=10", Status: 200, Client: "127.0.0.1"}
	values := []string{"gzip", "br"}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		b := r.Append(buf[:0], nil, 2)
		b = decoy.AppendJournalHeader(b, "Accept-Encoding", values...)
		decoy.AppendJournalHeader(b, "Authorization", "REDACTED")
	}); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
}

// FuzzJournalRecord checks that an entry made of any values comes back
// from its record, and that reading any bytes as a record never panics
// and, when it reads them, gives an entry whose record reads the same.
func FuzzJournalRecord(f *testing.F) {
	f.Add("GET", "/p/x", "a=1", "body", "Accept", "*/*", 200, 1.5, true, int64(0), int64(0), []byte{})
	f.Add("\u2028", "\xff", "<>&", "\x00\"\\", "", "🙂", -1, math.NaN(), false, int64(-62135596800), int64(999999999),
		(&decoy.JournalEntry{Method: "GET", Headers: map[string]string{"A": "b"}}).AppendRecord(nil))
	f.Fuzz(func(t *testing.T, method, path, query, body, name, value string, status int, ms float64, cut bool, sec, nsec int64, data []byte) {
		e := decoy.JournalEntry{At: time.Unix(sec, nsec).UTC(), Method: method, Path: path, Query: query,
			Headers: map[string]string{name: value, value: name}, Body: body, BodyCut: cut, RouteID: path, MockID: query,
			Rule: value, Status: status, DurationMS: ms, Client: method, Forwarded: !cut}
		roundTrip(t, &e)
		if len(name)%2 == 0 {
			e.Headers = nil
			roundTrip(t, &e)
		}
		read, err := decoy.ParseJournalRecord(data)
		if err != nil {
			return
		}
		again, err := decoy.ParseJournalRecord(read.AppendRecord(nil))
		if err != nil {
			t.Fatalf("%q read as %+v, whose record does not read: %v", data, read, err)
		}
		if diff := sameEntry(again, read); diff != "" {
			t.Fatalf("%q: %s", data, diff)
		}
	})
}

func BenchmarkJournalRecord(b *testing.B) {
	e := &decoy.JournalEntry{At: time.Now(), Method: "GET", Path: "/p/default/users", Query: "order_by=age&limit=10",
		Headers: map[string]string{"Accept": "application/json", "Accept-Encoding": "gzip, deflate, br", "Host": "127.0.0.1:8080",
			"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"},
		RouteID: "d15c9d3d-77d0-46ac-9946-337ebd22f504", MockID: "648e337a-8387-554d-a85e-4722043881e5", Status: 200, DurationMS: 0.656, Client: "127.0.0.1"}
	rec := e.AppendRecord(nil)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = e.AppendRecord(buf[:0])
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decoy.ParseJournalRecord(rec)
		}
	})
}
