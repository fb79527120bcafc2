// Package storetest is the behaviour every decoy.Store and decoy.QuotaCounter
// must have, as a test suite that each implementation runs against itself.
package storetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
)

// Backend is what the suite needs from an implementation.
type Backend interface {
	decoy.Store
	decoy.QuotaCounter
}

// Run runs the suite. open returns an empty store for each test.
func Run(t *testing.T, open func(t *testing.T) Backend) {
	t.Run("CreateAndFind", func(t *testing.T) { testCreateAndFind(t, open(t)) })
	t.Run("CreateFromFile", func(t *testing.T) { testCreateFromFile(t, open(t)) })
	t.Run("DataOutlivesChange", func(t *testing.T) { testDataOutlivesChange(t, open(t)) })
	t.Run("Conflict", func(t *testing.T) { testConflict(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, open(t)) })
	t.Run("List", func(t *testing.T) { testList(t, open(t)) })
	t.Run("Update", func(t *testing.T) { testUpdate(t, open(t)) })
	t.Run("ReplaceData", func(t *testing.T) { testReplaceData(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
	t.Run("AdminToken", func(t *testing.T) { testAdminToken(t, open(t)) })
	t.Run("Quota", func(t *testing.T) { testQuota(t, open(t)) })
	t.Run("QuotaConcurrent", func(t *testing.T) { testQuotaConcurrent(t, open(t)) })
	t.Run("QuotaConcurrentMixed", func(t *testing.T) { testQuotaConcurrentMixed(t, open(t)) })
}

func id(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func ptr[T any](v T) *T { return &v }

func create(t *testing.T, s Backend, n int, data string) *decoy.Mock {
	t.Helper()
	m, err := s.CreateMock(context.Background(), &decoy.Mock{
		ID: id(n), Name: fmt.Sprintf("mock %d", n), ContentType: "application/json", Status: 200, ETag: `"e"`,
	}, bytesOf(data))
	if err != nil {
		t.Fatalf("CreateMock: %v", err)
	}
	return m
}

func bytesOf(s string) decoy.Data { return decoy.Data{Bytes: []byte(s)} }

// find returns a mock's data as FindMockData gives it, read whole.
func find(t *testing.T, s decoy.Store, n int) (string, error) {
	t.Helper()
	_, d, err := s.FindMockData(context.Background(), id(n))
	if err != nil {
		return "", err
	}
	return read(t, d), nil
}

// read reads data returned by a store: exactly one of File and Bytes.
func read(t *testing.T, d decoy.Data) string {
	t.Helper()
	if (d.File == nil) == (d.Bytes == nil) {
		t.Fatalf("FindMockData set File %v and Bytes %v: want exactly one", d.File != nil, d.Bytes != nil)
	}
	if d.File == nil {
		return string(d.Bytes)
	}
	defer d.File.Close()
	b, err := io.ReadAll(d.File)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := decoy.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

func testCreateAndFind(t *testing.T, s Backend) {
	ctx := context.Background()
	in := &decoy.Mock{
		ID: id(1), Name: "users", Private: true, TokenHash: []byte{1, 2, 3}, ContentType: "application/json; charset=utf-8",
		Status: 201, DelayMS: 250, RateLimit: ptr(int64(5)), MonthlyQuota: ptr(int64(0)), ETag: `"abc"`,
	}
	data := []byte(`[{"a":30.0,"b":"\u00e9"}]`)
	m, err := s.CreateMock(ctx, in, decoy.Data{Bytes: data})
	if err != nil {
		t.Fatal(err)
	}
	if m.CreatedAt.IsZero() || !m.CreatedAt.Equal(m.UpdatedAt) || m.Version == 0 {
		t.Errorf("times/version not set: %+v", m)
	}
	got, found, err := s.FindMockData(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if gotData := read(t, found); gotData != string(data) {
		t.Errorf("data = %q, want %q byte for byte", gotData, data)
	}
	for _, m := range []*decoy.Mock{m, got} {
		if m.ID != in.ID || m.Name != in.Name || !m.Private || string(m.TokenHash) != "\x01\x02\x03" ||
			m.ContentType != in.ContentType || m.Status != 201 || m.DelayMS != 250 ||
			m.RateLimit == nil || *m.RateLimit != 5 || m.MonthlyQuota == nil || *m.MonthlyQuota != 0 ||
			m.Size != int64(len(data)) || m.ETag != `"abc"` {
			t.Errorf("stored mock differs: %+v", m)
		}
	}
	meta, err := s.FindMock(ctx, id(1))
	if err != nil || meta.Version != got.Version || meta.Size != got.Size {
		t.Errorf("FindMock = %+v, %v", meta, err)
	}
	// Empty data is data too.
	create(t, s, 2, "")
	if d, err := find(t, s, 2); err != nil || d != "" {
		t.Errorf("empty data = %q, %v", d, err)
	}
}

// Data given with a file holding it: a store may take the file over, and
// the caller can still read the file it holds open.
func testCreateFromFile(t *testing.T, s Backend) {
	ctx := context.Background()
	data := `[{"from":"a file"}]`
	f, err := os.CreateTemp(t.TempDir(), "upload-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(data)
	if _, err := s.CreateMock(ctx, &decoy.Mock{ID: id(1), ContentType: "application/json", Status: 200},
		decoy.Data{Bytes: []byte(data), File: f}); err != nil {
		t.Fatal(err)
	}
	if got, err := find(t, s, 1); err != nil || got != data {
		t.Errorf("data = %q, %v", got, err)
	}
	if b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20)); err != nil || string(b) != data {
		t.Errorf("the caller's file reads %q, %v after the create", b, err)
	}
	// The same for a replacement; the old data goes.
	g, err := os.CreateTemp(t.TempDir(), "upload-*")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.WriteString("{}")
	if _, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte("{}"), File: g}}); err != nil {
		t.Fatal(err)
	}
	if got, err := find(t, s, 1); err != nil || got != "{}" {
		t.Errorf("replaced data = %q, %v", got, err)
	}
}

// What FindMockData returned stays readable whole while the data is
// replaced or deleted: a reader is never cut off mid-document.
func testDataOutlivesChange(t *testing.T, s Backend) {
	ctx := context.Background()
	create(t, s, 1, "[1,2,3]")
	_, d, err := s.FindMockData(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf("[4]")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d); got != "[1,2,3]" {
		t.Errorf("data read after its replacement and deletion: %q", got)
	}
}

func testConflict(t *testing.T, s Backend) {
	create(t, s, 1, "[]")
	_, err := s.CreateMock(context.Background(), &decoy.Mock{ID: id(1), ContentType: "application/json", Status: 200}, bytesOf("{}"))
	wantCode(t, err, decoy.ECONFLICT)
	if d, _ := find(t, s, 1); d != "[]" {
		t.Errorf("conflicting create changed the data to %q", d)
	}
}

func testNotFound(t *testing.T, s Backend) {
	ctx := context.Background()
	_, err := s.FindMock(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	_, _, err = s.FindMockData(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.UpdateMock(ctx, id(9), decoy.MockUpdate{Name: ptr("x")})
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.ReplaceMockData(ctx, id(9), decoy.MockData{ContentType: "text/plain", Data: bytesOf("x")})
	wantCode(t, err, decoy.ENOTFOUND)
	wantCode(t, s.DeleteMock(ctx, id(9)), decoy.ENOTFOUND)
}

func testList(t *testing.T, s Backend) {
	ctx := context.Background()
	for _, n := range []int{5, 3, 9, 1, 7} {
		create(t, s, n, "[]")
	}
	for _, bad := range []struct {
		cursor string
		limit  int
	}{{"", 0}, {"", -1}, {"x", 2}, {"-1", 2}, {"01", 2}, {"+1", 2}} {
		if _, _, err := s.ListMocks(ctx, bad.cursor, bad.limit); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("ListMocks(%q, %d): %v, want EINVALID", bad.cursor, bad.limit, err)
		}
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		mocks, next, err := s.ListMocks(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(mocks) > 2 || pages > 5 {
			t.Fatalf("page %d has %d mocks", pages, len(mocks))
		}
		for _, m := range mocks {
			seen = append(seen, m.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	want := []string{id(5), id(3), id(9), id(1), id(7)}
	if !slices.Equal(seen, want) {
		t.Errorf("listed %v, want creation order %v", seen, want)
	}
	if _, _, err := s.ListMocks(ctx, "not-a-cursor", 2); decoy.ErrorCode(err) != decoy.EINVALID {
		t.Errorf("bad cursor: %v", err)
	}
}

func testUpdate(t *testing.T, s Backend) {
	ctx := context.Background()
	before := create(t, s, 1, "[]")
	m, err := s.UpdateMock(ctx, id(1), decoy.MockUpdate{
		Name: ptr("renamed"), Private: ptr(true), TokenHash: ptr([]byte("hash")), Status: ptr(503), DelayMS: ptr(1000),
		RateLimit: &decoy.LimitUpdate{Value: ptr(int64(7))}, MonthlyQuota: &decoy.LimitUpdate{Value: ptr(int64(9))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "renamed" || !m.Private || string(m.TokenHash) != "hash" || m.Status != 503 || m.DelayMS != 1000 ||
		*m.RateLimit != 7 || *m.MonthlyQuota != 9 || m.Version <= before.Version || m.ContentType != "application/json" {
		t.Errorf("update not applied: %+v", m)
	}
	// Only what is set changes; a nil limit value returns to the default.
	m, err = s.UpdateMock(ctx, id(1), decoy.MockUpdate{RateLimit: &decoy.LimitUpdate{}, TokenHash: ptr([]byte(nil)), Private: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if m.RateLimit != nil || m.MonthlyQuota == nil || *m.MonthlyQuota != 9 || m.Name != "renamed" || m.Private || m.TokenHash != nil {
		t.Errorf("partial update: %+v", m)
	}
	found, _ := s.FindMock(ctx, id(1))
	if found.Version != m.Version || found.Name != "renamed" {
		t.Errorf("FindMock after update: %+v", found)
	}
}

func testReplaceData(t *testing.T, s Backend) {
	ctx := context.Background()
	before := create(t, s, 1, "[1]")
	m, err := s.ReplaceMockData(ctx, id(1), decoy.MockData{ContentType: "text/html", Data: bytesOf("<p>hi</p>"), ETag: `"new"`})
	if err != nil {
		t.Fatal(err)
	}
	if m.ContentType != "text/html" || m.Size != 9 || m.ETag != `"new"` || m.Version <= before.Version || m.Name != before.Name {
		t.Errorf("replaced mock: %+v", m)
	}
	if d, _ := find(t, s, 1); d != "<p>hi</p>" {
		t.Errorf("data = %q", d)
	}
}

func testDelete(t *testing.T, s Backend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	if _, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindMock(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
	// A mock made again with the same id starts from zero.
	create(t, s, 1, "[]")
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 0 {
		t.Errorf("counts survived deletion: %d", used)
	}
}

func testAdminToken(t *testing.T, s Backend) {
	ctx := context.Background()
	if h, err := s.AdminTokenHash(ctx); err != nil || h != nil {
		t.Fatalf("fresh store has admin hash %x, %v", h, err)
	}
	if err := s.SetAdminTokenHash(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	// The first generated token wins, as when replicas start together.
	wantCode(t, s.SetAdminTokenHash(ctx, []byte("second")), decoy.ECONFLICT)
	if got, _ := s.AdminTokenHash(ctx); string(got) != "first" {
		t.Errorf("hash = %q, want %q", got, "first")
	}
	// A reset replaces it, for a token that was lost.
	if err := s.ResetAdminTokenHash(ctx, []byte("third")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AdminTokenHash(ctx); string(got) != "third" {
		t.Errorf("hash after a reset = %q, want %q", got, "third")
	}
}

func testQuota(t *testing.T, s Backend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	for i := int64(1); i <= 3; i++ {
		used, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 3)
		if err != nil || !ok || used != i {
			t.Fatalf("reservation %d: used=%d ok=%v err=%v", i, used, ok, err)
		}
	}
	used, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 3)
	if err != nil || ok || used != 3 {
		t.Fatalf("over quota: used=%d ok=%v err=%v", used, ok, err)
	}
	if err := s.ReleaseQuota(ctx, id(1), "2026-11"); err != nil {
		t.Fatal(err)
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 2 {
		t.Errorf("after release used = %d", used)
	}
	// A new month starts from zero; limit 0 counts without limit.
	for i := 0; i < 5; i++ {
		if _, ok, _ := s.ReserveQuota(ctx, id(1), "2026-12", 0); !ok {
			t.Fatal("unlimited reservation refused")
		}
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-12"); used != 5 {
		t.Errorf("December used = %d", used)
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 2 {
		t.Errorf("November changed: %d", used)
	}
	// Releasing never goes below zero.
	s.ReleaseQuota(ctx, id(1), "2027-01")
	if used, _ := s.QuotaUsed(ctx, id(1), "2027-01"); used != 0 {
		t.Errorf("empty month = %d", used)
	}
	// A deleted mock cannot be counted.
	_, _, err = s.ReserveQuota(ctx, id(8), "2026-11", 3)
	if code := decoy.ErrorCode(err); code != decoy.ENOTFOUND {
		t.Errorf("reserving for a missing mock: %v", err)
	}
}

func testQuotaConcurrent(t *testing.T, s Backend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	var granted atomic.Int64
	var wg sync.WaitGroup
	var errs atomic.Value
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				_, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 37)
				if err != nil {
					errs.Store(err)
					return
				}
				if ok {
					granted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := errs.Load().(error); err != nil {
		t.Fatal(err)
	}
	if granted.Load() != 37 {
		t.Errorf("granted %d of 160 against a quota of 37", granted.Load())
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 37 {
		t.Errorf("used = %d", used)
	}
}

// Reservations for a missing mock, releases and reservations of other mocks
// at the same time do not disturb one another (stores may commit concurrent
// counts together).
func testQuotaConcurrentMixed(t *testing.T, s Backend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	create(t, s, 2, "[]")
	var wg sync.WaitGroup
	var granted1, granted2 atomic.Int64
	for g := range 12 {
		wg.Go(func() {
			for range 20 {
				switch g % 3 {
				case 0:
					if _, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 25); err != nil {
						t.Error(err)
					} else if ok {
						granted1.Add(1)
					}
				case 1:
					if _, _, err := s.ReserveQuota(ctx, id(9), "2026-11", 25); decoy.ErrorCode(err) != decoy.ENOTFOUND {
						t.Errorf("missing mock: %v", err)
					}
				case 2:
					if _, ok, err := s.ReserveQuota(ctx, id(2), "2026-11", 0); err != nil || !ok {
						t.Error(ok, err)
					} else {
						granted2.Add(1)
					}
					if err := s.ReleaseQuota(ctx, id(2), "2026-11"); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if granted1.Load() != 25 {
		t.Errorf("granted %d of a quota of 25", granted1.Load())
	}
	if n, _ := s.QuotaUsed(ctx, id(1), "2026-11"); n != 25 {
		t.Errorf("count of mock 1: %d, want 25", n)
	}
	if n, _ := s.QuotaUsed(ctx, id(2), "2026-11"); n != 0 || granted2.Load() != 80 {
		t.Errorf("mock 2: count %d after as many releases as reservations (%d)", n, granted2.Load())
	}
}
