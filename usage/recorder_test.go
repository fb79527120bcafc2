package usage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/usage"
)

// memStore is a UsageHistoryStore in memory that can be told to fail.
type memStore struct {
	mu      sync.Mutex
	minutes map[string]map[time.Time][2]int64
	days    map[string]map[time.Time][2]int64
	adds    int
	fail    error
}

func newMemStore() *memStore {
	return &memStore{minutes: map[string]map[time.Time][2]int64{}, days: map[string]map[time.Time][2]int64{}}
}

func (s *memStore) AddUsage(_ context.Context, counts []decoy.UsageCount, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.adds++
	for _, c := range counts {
		for _, m := range []struct {
			into map[string]map[time.Time][2]int64
			at   time.Time
		}{{s.minutes, c.Minute}, {s.days, c.Minute.Truncate(24 * time.Hour)}} {
			if m.into[c.MockID] == nil {
				m.into[c.MockID] = map[time.Time][2]int64{}
			}
			v := m.into[c.MockID][m.at]
			m.into[c.MockID][m.at] = [2]int64{v[0] + c.Served, v[1] + c.Refused}
		}
	}
	return nil
}

func (s *memStore) UsageHistory(_ context.Context, id string, minutesFrom, daysFrom time.Time) (minutes, days []decoy.UsageBucket, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for at, v := range s.minutes[id] {
		if !at.Before(minutesFrom) {
			minutes = append(minutes, decoy.UsageBucket{Start: at, Served: v[0], Refused: v[1]})
		}
	}
	for at, v := range s.days[id] {
		if !at.Before(daysFrom) {
			days = append(days, decoy.UsageBucket{Start: at, Served: v[0], Refused: v[1]})
		}
	}
	return minutes, days, nil
}

// clock is a manual clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

const mock = "00000000-0000-4000-8000-000000000001"

var start = time.Date(2026, 11, 3, 10, 0, 30, 0, time.UTC)

func newRecorder(s *memStore, c *clock) *usage.Recorder {
	r := usage.NewRecorder(s, nil)
	r.Now = c.Now
	return r
}

// minute returns the bucket of the history that starts at t.
func minute(t *testing.T, h decoy.UsageHistory, at time.Time) decoy.UsageBucket {
	t.Helper()
	for _, b := range h.Minutes {
		if b.Start.Equal(at.Truncate(time.Minute)) {
			return b
		}
	}
	t.Fatalf("no minute bucket at %v", at)
	return decoy.UsageBucket{}
}

func TestBucketing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// flushEvery is how often the recorder flushes while the events
		// come in; 0: only at the end.
		flushEvery time.Duration
	}{
		{"flushed at the end", 0},
		{"flushed every 5s", 5 * time.Second},
		{"flushed every 3 minutes", 3 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newMemStore(), &clock{t: start}
			r := newRecorder(s, c)
			lastFlush := c.t
			// Over 4 minutes, one served read every 10 s and one refused
			// read every 30 s.
			for i := range 24 {
				c.t = start.Add(time.Duration(i) * 10 * time.Second)
				r.Served(mock, c.t)
				if i%3 == 0 {
					r.Refused(mock, c.t)
				}
				if tc.flushEvery > 0 && c.t.Sub(lastFlush) >= tc.flushEvery {
					if err := r.Flush(ctx); err != nil {
						t.Fatal(err)
					}
					lastFlush = c.t
				}
			}
			// Before the last flush, the history already shows every
			// read: the store's counts and those in memory.
			h, err := r.History(ctx, mock, c.t)
			if err != nil {
				t.Fatal(err)
			}
			checkHistory(t, h)
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			h, _ = r.History(ctx, mock, c.t)
			checkHistory(t, h)
			// Nothing was counted twice: the store alone has it all.
			s.mu.Lock()
			var served, refused int64
			for _, v := range s.minutes[mock] {
				served += v[0]
				refused += v[1]
			}
			s.mu.Unlock()
			if served != 24 || refused != 8 {
				t.Errorf("store holds %d served, %d refused; want 24, 8", served, refused)
			}
		})
	}
}

// checkHistory checks the reads of TestBucketing: from 10:00:30 to
// 10:04:20, every 10 s.
func checkHistory(t *testing.T, h decoy.UsageHistory) {
	t.Helper()
	if len(h.Minutes) != decoy.UsageMinutes {
		t.Fatalf("%d minute buckets, want %d", len(h.Minutes), decoy.UsageMinutes)
	}
	last := h.Minutes[len(h.Minutes)-1].Start
	if want := time.Date(2026, 11, 3, 10, 4, 0, 0, time.UTC); !last.Equal(want) {
		t.Errorf("last minute starts %v, want %v", last, want)
	}
	for i, want := range []struct{ served, refused int64 }{{3, 1}, {6, 2}, {6, 2}, {6, 2}, {3, 1}} {
		at := start.Add(time.Duration(i) * time.Minute)
		if b := minute(t, h, at); b.Served != want.served || b.Refused != want.refused {
			t.Errorf("minute %v: %d served, %d refused; want %d, %d", at.Format("15:04"), b.Served, b.Refused, want.served, want.refused)
		}
	}
	if len(h.Days) != 3 {
		t.Fatalf("%d day buckets on the 3rd, want 3", len(h.Days))
	}
	if d := h.Days[2]; d.Served != 24 || d.Refused != 8 || !d.Start.Equal(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("today: %+v", d)
	}
	if h.Days[0].Served+h.Days[1].Served != 0 {
		t.Errorf("earlier days have reads: %+v", h.Days[:2])
	}
}

// An hour later the minutes of the reads have left the chart, and the day
// still counts them; a month later, neither does.
func TestHistoryWindow(t *testing.T) {
	ctx := context.Background()
	s, c := newMemStore(), &clock{t: start}
	r := newRecorder(s, c)
	r.Served(mock, start)
	r.Refused(mock, start)
	r.Flush(ctx)
	h, _ := r.History(ctx, mock, start.Add(59*time.Minute))
	if b := minute(t, h, start); b.Served != 1 || b.Refused != 1 {
		t.Errorf("59 minutes later: %+v", b)
	}
	h, _ = r.History(ctx, mock, start.Add(time.Hour))
	for _, b := range h.Minutes {
		if b.Served != 0 || b.Refused != 0 {
			t.Errorf("an hour later, minute %v still has reads", b.Start)
		}
	}
	if h.Days[2].Served != 1 {
		t.Errorf("day lost its reads: %+v", h.Days[2])
	}
	h, _ = r.History(ctx, mock, time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	if len(h.Days) != 5 || h.Days[0].Start.Month() != time.December {
		t.Errorf("December history: %+v", h.Days)
	}
	for _, b := range h.Days {
		if b.Served != 0 {
			t.Errorf("November reads shown in December: %+v", b)
		}
	}
}

// A store that fails keeps the counts in memory; they are shown meanwhile
// and written once it is back.
func TestStoreFailure(t *testing.T) {
	ctx := context.Background()
	s, c := newMemStore(), &clock{t: start}
	r := newRecorder(s, c)
	s.fail = errors.New("database down")
	r.Served(mock, start)
	if err := r.Flush(ctx); err == nil {
		t.Fatal("flush to a failing store: no error")
	}
	r.Served(mock, start)
	if h, _ := r.History(ctx, mock, start); minute(t, h, start).Served != 2 {
		t.Errorf("history while the store fails: %+v", minute(t, h, start))
	}
	s.fail = nil
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.minutes[mock][start.Truncate(time.Minute)]; got[0] != 2 {
		t.Errorf("store after recovery holds %v, want 2 served", got)
	}
	// Once flushed, nothing is sent again.
	adds := s.adds
	r.Flush(ctx)
	if s.adds != adds {
		t.Error("an empty flush called the store")
	}
}

// Counters of a mock not read for a while are dropped from memory; reads
// that come later start new ones, and nothing is lost.
func TestIdleMocksForgotten(t *testing.T) {
	ctx := context.Background()
	s, c := newMemStore(), &clock{t: start}
	r := newRecorder(s, c)
	r.Served(mock, c.t)
	for range 130 { // 130 flushes of 5 s: over ten minutes
		c.t = c.t.Add(usage.FlushInterval)
		r.Flush(ctx)
	}
	r.Served(mock, c.t)
	r.Flush(ctx)
	var served int64
	for _, v := range s.minutes[mock] {
		served += v[0]
	}
	if served != 2 {
		t.Errorf("store holds %d served reads, want 2", served)
	}
}

// Recording is the hot path: no allocation once the mock is known.
func TestRecordAllocations(t *testing.T) {
	r := newRecorder(newMemStore(), &clock{t: start})
	r.Served(mock, start)
	r.Flush(context.Background()) // publishes the mock's counters
	id := string([]byte(mock))    // not the constant: as a request has it
	if n := testing.AllocsPerRun(1000, func() { r.Served(id, start); r.Refused(id, start) }); n != 0 {
		t.Errorf("recording allocates %.1f times per read", n)
	}
}

// A nil recorder records nothing and does not fail.
func TestNilRecorder(t *testing.T) {
	var r *usage.Recorder
	r.Served(mock, start)
	r.Refused(mock, start)
	if err := r.Flush(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestConcurrentRecording(t *testing.T) {
	ctx := context.Background()
	s, c := newMemStore(), &clock{t: start}
	r := newRecorder(s, c)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			id := mock
			if g%2 == 1 {
				id = "00000000-0000-4000-8000-000000000002"
			}
			for range 1000 {
				r.Served(id, start)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			r.Flush(ctx)
		}
	})
	wg.Wait()
	r.Flush(ctx)
	for _, id := range []string{mock, "00000000-0000-4000-8000-000000000002"} {
		if got := s.minutes[id][start.Truncate(time.Minute)][0]; got != 4000 {
			t.Errorf("%s: %d served stored, want 4000", id, got)
		}
	}
}

func BenchmarkServed(b *testing.B) {
	r := newRecorder(newMemStore(), &clock{t: start})
	r.Served(mock, start)
	r.Flush(context.Background())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Served(mock, start)
		}
	})
}

// Past MaxIdleCounters, the counters of mocks not read since the last
// flush are dropped at the next one, not ten minutes later; what they
// counted is stored, and a mock read again counts again.
func TestIdleCountersBounded(t *testing.T) {
	ctx := context.Background()
	s, c := newMemStore(), &clock{t: start}
	r := newRecorder(s, c)
	const mocks = usage.MaxIdleCounters + 100
	id := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	for i := range mocks {
		r.Served(id(i), c.t)
	}
	c.t = c.t.Add(usage.FlushInterval)
	r.Flush(ctx)
	if n := r.Len(); n != mocks {
		t.Fatalf("%d counters after the flush that drained them, want %d", n, mocks)
	}
	r.Served(id(0), c.t) // in use
	c.t = c.t.Add(usage.FlushInterval)
	r.Flush(ctx)
	if n := r.Len(); n != 1 {
		t.Fatalf("%d counters once the others were idle for a flush, want 1", n)
	}
	r.Served(id(1), c.t)
	c.t = c.t.Add(usage.FlushInterval)
	r.Flush(ctx)
	for i, want := range map[int]int64{0: 2, 1: 2, 2: 1, mocks - 1: 1} {
		var served int64
		for _, v := range s.minutes[id(i)] {
			served += v[0]
		}
		if served != want {
			t.Errorf("mock %d: %d served stored, want %d", i, served, want)
		}
	}
}
