// Package journaltest is the behaviour every decoy.JournalStore must have,
// as a test suite that each implementation runs against itself: the
// in-memory Ring of package journal and Redis Streams (package redis).
package journaltest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// Open returns an empty store that keeps at most size entries a project.
type Open func(t testing.TB, size int) decoy.JournalStore

// Run runs the suite.
func Run(t *testing.T, open Open) {
	t.Run("BoundOldestLeaveFirst", func(t *testing.T) { testBound(t, open) })
	t.Run("IDsOrder", func(t *testing.T) { testIDs(t, open) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, open) })
	t.Run("CursorPages", func(t *testing.T) { testPages(t, open) })
	t.Run("BadCursor", func(t *testing.T) { testBadCursor(t, open) })
	t.Run("After", func(t *testing.T) { testAfter(t, open) })
	t.Run("ClearAndProjects", func(t *testing.T) { testClear(t, open) })
	t.Run("EntryKeptWhole", func(t *testing.T) { testWhole(t, open) })
}

// at is the time of the test's entries: entry i is at at+i seconds.
var at = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// entry is the i-th entry of a test: GET /i unless changed.
func entry(i int) *decoy.JournalEntry {
	return &decoy.JournalEntry{At: at.Add(time.Duration(i) * time.Second), Method: "GET", Path: fmt.Sprintf("/%d", i), Status: 200,
		Headers: map[string]string{"Accept": "*/*"}, Client: "127.0.0.1"}
}

func appendAll(t testing.TB, s decoy.JournalStore, project string, es ...*decoy.JournalEntry) {
	t.Helper()
	if err := Append(context.Background(), s, map[string][]*decoy.JournalEntry{project: es}); err != nil {
		t.Fatal(err)
	}
}

// Records returns the records of a batch of entries, as a store takes
// them.
func Records(batch map[string][]*decoy.JournalEntry) map[string][][]byte {
	out := make(map[string][][]byte, len(batch))
	for project, es := range batch {
		for _, e := range es {
			out[project] = append(out[project], e.AppendRecord(nil))
		}
	}
	return out
}

// Append appends a batch of entries to s, as their records, and sets the
// IDs s gave those it keeps, as a listing finds them: a test's store is
// written by it alone.
func Append(ctx context.Context, s decoy.JournalStore, batch map[string][]*decoy.JournalEntry) error {
	if err := s.Append(ctx, Records(batch)); err != nil {
		return err
	}
	for project, es := range batch {
		kept, _, err := s.List(ctx, project, decoy.JournalFilter{}, "", len(es))
		if err != nil {
			return err
		}
		for i, e := range kept {
			es[len(es)-1-i].ID = e.ID
		}
	}
	return nil
}

// paths lists the paths of entries, in their order.
func paths(es []*decoy.JournalEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func list(t testing.TB, s decoy.JournalStore, project string, f decoy.JournalFilter, cursor string, limit int) ([]string, string) {
	t.Helper()
	es, next, err := s.List(context.Background(), project, f, cursor, limit)
	if err != nil {
		t.Fatal(err)
	}
	return paths(es), next
}

func count(t testing.TB, s decoy.JournalStore, project string, f decoy.JournalFilter) int64 {
	t.Helper()
	n, err := s.Count(context.Background(), project, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testBound(t *testing.T, open Open) {
	s := open(t, 5)
	// One at a time, then several in one batch: 8 in all.
	for i := range 3 {
		appendAll(t, s, "p", entry(i))
	}
	appendAll(t, s, "p", entry(3), entry(4), entry(5), entry(6), entry(7))
	got, next := list(t, s, "p", decoy.JournalFilter{}, "", 100)
	if want := "[/7 /6 /5 /4 /3]"; fmt.Sprint(got) != want || next != "" {
		t.Errorf("listed %v (next %q), want the 5 newest, newest first: %s", got, next, want)
	}
	if n := count(t, s, "p", decoy.JournalFilter{}); n != 5 {
		t.Errorf("count %d, want 5", n)
	}
	if n := count(t, s, "p", decoy.JournalFilter{Path: "/1"}); n != 0 {
		t.Errorf("an entry past the bound is counted: %d", n)
	}
	// Many more: still the newest 5.
	for i := 8; i < 300; i += 20 {
		var es []*decoy.JournalEntry
		for k := i; k < i+20; k++ {
			es = append(es, entry(k))
		}
		appendAll(t, s, "p", es...)
	}
	if got, _ := list(t, s, "p", decoy.JournalFilter{}, "", 100); fmt.Sprint(got) != "[/307 /306 /305 /304 /303]" {
		t.Errorf("after 308 entries: %v", got)
	}
	if n := count(t, s, "p", decoy.JournalFilter{Method: "GET"}); n != 5 {
		t.Errorf("filtered count after 308 entries: %d, want 5", n)
	}
}

func testIDs(t *testing.T, open Open) {
	s := open(t, 100)
	es := []*decoy.JournalEntry{entry(0), entry(1), entry(2)}
	appendAll(t, s, "p", es...)
	appendAll(t, s, "p", entry(3))
	prevMS, prevSeq := uint64(0), uint64(0)
	for i, e := range es {
		ms, seq, ok := decoy.ParseJournalID(e.ID)
		if !ok {
			t.Fatalf("entry %d: listed with the ID %q", i, e.ID)
		}
		if i > 0 && (ms < prevMS || ms == prevMS && seq <= prevSeq) {
			t.Errorf("IDs do not increase: %q after %d-%d", e.ID, prevMS, prevSeq)
		}
		prevMS, prevSeq = ms, seq
	}
	listed, _, err := s.List(context.Background(), "p", decoy.JournalFilter{}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 4 || listed[3].ID != es[0].ID || listed[1].ID != es[2].ID {
		t.Errorf("listed IDs changed with a later Append: %v", listed)
	}
}

func testFilters(t *testing.T, open Open) {
	s := open(t, 100)
	mk := func(i int, method, path string, status int) *decoy.JournalEntry {
		e := entry(i)
		e.Method, e.Path, e.Status = method, path, status
		return e
	}
	appendAll(t, s, "p",
		mk(0, "GET", "/users", 200),
		mk(1, "POST", "/users", 201),
		mk(2, "GET", "/users/1", 200),
		mk(3, "GET", "/usersX", 404),
		mk(4, "DELETE", "/users/1", 204),
		mk(5, "GET", "/orders", 500),
	)
	for _, tc := range []struct {
		name string
		f    decoy.JournalFilter
		want string
	}{
		{"none", decoy.JournalFilter{}, "[/orders /users/1 /usersX /users/1 /users /users]"},
		{"method", decoy.JournalFilter{Method: "get"}, "[/orders /usersX /users/1 /users]"},
		{"path exact", decoy.JournalFilter{Path: "/users"}, "[/users /users]"},
		{"path prefix", decoy.JournalFilter{Path: "/users/*"}, "[/users/1 /users/1]"},
		{"path prefix, no slash", decoy.JournalFilter{Path: "/users*"}, "[/users/1 /usersX /users/1 /users /users]"},
		{"status", decoy.JournalFilter{Status: 200}, "[/users/1 /users]"},
		{"since", decoy.JournalFilter{Since: at.Add(4 * time.Second)}, "[/orders /users/1]"},
		{"all", decoy.JournalFilter{Method: "GET", Path: "/users*", Status: 200, Since: at.Add(time.Second)}, "[/users/1]"},
		{"nothing", decoy.JournalFilter{Status: 418}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, next := list(t, s, "p", tc.f, "", 100)
			if fmt.Sprint(got) != tc.want || next != "" {
				t.Errorf("listed %v (next %q), want %s", got, next, tc.want)
			}
			if n, want := count(t, s, "p", tc.f), int64(len(got)); n != want {
				t.Errorf("count %d, want %d", n, want)
			}
		})
	}
}

func testPages(t *testing.T, open Open) {
	s := open(t, 50)
	var es []*decoy.JournalEntry
	for i := range 23 {
		e := entry(i)
		if i%2 == 1 {
			e.Status = 404
		}
		es = append(es, e)
	}
	appendAll(t, s, "p", es...)
	for _, tc := range []struct {
		name  string
		f     decoy.JournalFilter
		limit int
		want  []string
	}{
		{"all", decoy.JournalFilter{}, 10, []string{
			"[/22 /21 /20 /19 /18 /17 /16 /15 /14 /13]", "[/12 /11 /10 /9 /8 /7 /6 /5 /4 /3]", "[/2 /1 /0]"}},
		{"filtered", decoy.JournalFilter{Status: 404}, 4, []string{"[/21 /19 /17 /15]", "[/13 /11 /9 /7]", "[/5 /3 /1]"}},
		{"exact pages", decoy.JournalFilter{Status: 200}, 6, []string{"[/22 /20 /18 /16 /14 /12]", "[/10 /8 /6 /4 /2 /0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cursor := ""
			for i, want := range tc.want {
				got, next := list(t, s, "p", tc.f, cursor, tc.limit)
				if fmt.Sprint(got) != want {
					t.Fatalf("page %d: %v, want %s", i+1, got, want)
				}
				if last := i == len(tc.want)-1; (next == "") != last {
					t.Fatalf("page %d: next cursor %q (last page: %v)", i+1, next, last)
				}
				cursor = next
			}
		})
	}
	// New entries do not shift the pages of a listing under way.
	_, next := list(t, s, "p", decoy.JournalFilter{}, "", 10)
	appendAll(t, s, "p", entry(23), entry(24))
	if got, _ := list(t, s, "p", decoy.JournalFilter{}, next, 3); fmt.Sprint(got) != "[/12 /11 /10]" {
		t.Errorf("the second page after new entries: %v", got)
	}
}

func testBadCursor(t *testing.T, open Open) {
	s := open(t, 10)
	appendAll(t, s, "p", entry(0))
	for _, c := range []string{"x", "12", "-", "1-x", "🙂"} {
		if _, _, err := s.List(context.Background(), "p", decoy.JournalFilter{}, c, 10); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("cursor %q: %v, want EINVALID", c, err)
		}
	}
	if _, err := s.After(context.Background(), "p", "x", 10); decoy.ErrorCode(err) != decoy.EINVALID {
		t.Errorf("After x: %v, want EINVALID", err)
	}
}

func testAfter(t *testing.T, open Open) {
	s := open(t, 100)
	es := []*decoy.JournalEntry{entry(0), entry(1), entry(2), entry(3)}
	appendAll(t, s, "p", es...)
	ctx := context.Background()
	got, err := s.After(ctx, "p", "0-0", 100)
	if err != nil || fmt.Sprint(paths(got)) != "[/0 /1 /2 /3]" {
		t.Errorf("After 0-0: %v %v", paths(got), err)
	}
	got, _ = s.After(ctx, "p", es[1].ID, 100)
	if fmt.Sprint(paths(got)) != "[/2 /3]" {
		t.Errorf("After the second: %v", paths(got))
	}
	got, _ = s.After(ctx, "p", es[0].ID, 2)
	if fmt.Sprint(paths(got)) != "[/1 /2]" {
		t.Errorf("After the first, 2: %v", paths(got))
	}
	got, _ = s.After(ctx, "p", es[3].ID, 100)
	if len(got) != 0 {
		t.Errorf("After the newest: %v", paths(got))
	}
	got, err = s.After(ctx, "nobody", "0-0", 100)
	if err != nil || len(got) != 0 {
		t.Errorf("After on an empty journal: %v %v", paths(got), err)
	}
}

func testClear(t *testing.T, open Open) {
	s := open(t, 10)
	ctx := context.Background()
	if err := Append(ctx, s, map[string][]*decoy.JournalEntry{"a": {entry(0), entry(1)}, "b": {entry(2)}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := list(t, s, "a", decoy.JournalFilter{}, "", 10); fmt.Sprint(got) != "[/1 /0]" {
		t.Errorf("a: %v", got)
	}
	if got, _ := list(t, s, "b", decoy.JournalFilter{}, "", 10); fmt.Sprint(got) != "[/2]" {
		t.Errorf("b: %v", got)
	}
	if err := s.Clear(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := list(t, s, "a", decoy.JournalFilter{}, "", 10); len(got) != 0 {
		t.Errorf("a after Clear: %v", got)
	}
	if n := count(t, s, "a", decoy.JournalFilter{}); n != 0 {
		t.Errorf("count of a after Clear: %d", n)
	}
	if got, _ := list(t, s, "b", decoy.JournalFilter{}, "", 10); fmt.Sprint(got) != "[/2]" {
		t.Errorf("b after a's Clear: %v", got)
	}
	appendAll(t, s, "a", entry(3))
	if got, _ := list(t, s, "a", decoy.JournalFilter{}, "", 10); fmt.Sprint(got) != "[/3]" {
		t.Errorf("a after Clear and a new entry: %v", got)
	}
	if err := s.Clear(ctx, "never"); err != nil {
		t.Errorf("Clear of an empty journal: %v", err)
	}
}

func testWhole(t *testing.T, open Open) {
	s := open(t, 10)
	e := &decoy.JournalEntry{At: at, Method: "PATCH", Path: "/p/shop/users/7", Query: "a=1&auth_token=REDACTED",
		Headers: map[string]string{"Authorization": "REDACTED", "X-Mode": "slow"}, Body: `{"name":"Ann"}` + "\x00é", BodyCut: true,
		RouteID: "r1", MockID: "m1", Rule: "slow", Status: 503, DurationMS: 12.5, Client: "203.0.113.7", Forwarded: true}
	appendAll(t, s, "p", e)
	got, _, err := s.List(context.Background(), "p", decoy.JournalFilter{}, "", 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	g := *got[0]
	want := *e
	if !g.At.Equal(want.At) {
		t.Errorf("at %v, want %v", g.At, want.At)
	}
	g.At, want.At = time.Time{}, time.Time{}
	if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", want) {
		t.Errorf("kept\n %+v\nwant\n %+v", g, want)
	}
}
