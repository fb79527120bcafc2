package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/decoy-mock/decoy"
)

// VersionBackend is what the versions suite needs from an implementation.
type VersionBackend interface {
	decoy.Store
	decoy.VersionStore
}

// RunVersions runs the suite of data versions. open returns an empty store
// that keeps maxVersions versions per mock.
func RunVersions(t *testing.T, open func(t *testing.T, maxVersions int) VersionBackend) {
	t.Run("CreateIsVersionOne", func(t *testing.T) { testCreateIsVersionOne(t, open(t, 20)) })
	t.Run("ReplaceKeepsPrevious", func(t *testing.T) { testReplaceKeepsPrevious(t, open(t, 20)) })
	t.Run("Actor", func(t *testing.T) { testVersionActor(t, open(t, 20)) })
	t.Run("Bound", func(t *testing.T) { testVersionBound(t, open(t, 3)) })
	t.Run("BoundOfOne", func(t *testing.T) { testVersionBoundOfOne(t, open(t, 1)) })
	t.Run("NotFound", func(t *testing.T) { testVersionNotFound(t, open(t, 20)) })
	t.Run("Delete", func(t *testing.T) { testVersionDelete(t, open(t, 20)) })
	t.Run("Large", func(t *testing.T) { testVersionLarge(t, open(t, 20)) })
	t.Run("Concurrent", func(t *testing.T) { testVersionConcurrent(t, open(t, 5)) })
	t.Run("SettingsAreNotVersions", func(t *testing.T) { testSettingsAreNotVersions(t, open(t, 20)) })
	t.Run("DataOutlivesPrune", func(t *testing.T) { testVersionDataOutlivesPrune(t, open(t, 2)) })
}

func createV(t *testing.T, s VersionBackend, n int, data string) *decoy.Mock {
	t.Helper()
	m, err := s.CreateMock(context.Background(), &decoy.Mock{
		ID: id(n), Name: fmt.Sprintf("mock %d", n), ContentType: "application/json", Status: 200, ETag: etagOf(data),
	}, bytesOf(data))
	if err != nil {
		t.Fatalf("CreateMock: %v", err)
	}
	return m
}

func etagOf(data string) string { return fmt.Sprintf(`"%x"`, len(data)) + data }

func replaceV(t *testing.T, s VersionBackend, n int, ct, data string) *decoy.Mock {
	t.Helper()
	m, err := s.ReplaceMockData(context.Background(), id(n), decoy.MockData{ContentType: ct, Data: bytesOf(data), ETag: etagOf(data)})
	if err != nil {
		t.Fatalf("ReplaceMockData: %v", err)
	}
	return m
}

// versionData returns a version and its data, read whole.
func versionData(t *testing.T, s VersionBackend, n int, v int64) (*decoy.Version, string, error) {
	t.Helper()
	ver, d, err := s.FindVersionData(context.Background(), id(n), v)
	if err != nil {
		return nil, "", err
	}
	return ver, read(t, d), nil
}

// numbers returns the numbers of versions, in order, with the current one
// starred.
func numbers(vs []decoy.Version) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, v.Version)
		if v.Current {
			b.WriteByte('*')
		}
	}
	return b.String()
}

func versions(t *testing.T, s VersionBackend, n int) []decoy.Version {
	t.Helper()
	vs, err := s.MockVersions(context.Background(), id(n))
	if err != nil {
		t.Fatalf("MockVersions: %v", err)
	}
	return vs
}

func testCreateIsVersionOne(t *testing.T, s VersionBackend) {
	m := createV(t, s, 1, `[1]`)
	vs := versions(t, s, 1)
	if len(vs) != 1 {
		t.Fatalf("versions after create: %+v", vs)
	}
	v := vs[0]
	if v.Version != 1 || !v.Current || v.Size != 3 || v.ETag != etagOf(`[1]`) || v.ContentType != "application/json" ||
		!v.CreatedAt.Equal(m.UpdatedAt) || v.Actor != decoy.ServerAdmin {
		t.Errorf("version 1 = %+v (mock %+v)", v, m)
	}
	got, data, err := versionData(t, s, 1, 1)
	if err != nil || data != `[1]` || got.Version != 1 || !got.Current {
		t.Errorf("FindVersionData(1) = %+v, %q, %v", got, data, err)
	}
	if n, err := s.VersionBytes(context.Background(), id(1)); err != nil || n != 3 {
		t.Errorf("VersionBytes = %d, %v; want 3", n, err)
	}
}

// Each replacement is a new version; the previous ones keep their data,
// content type and etag.
func testReplaceKeepsPrevious(t *testing.T, s VersionBackend) {
	ctx := context.Background()
	createV(t, s, 1, `[1]`)
	replaceV(t, s, 1, "text/csv", "a,b\n1,2\n")
	m := replaceV(t, s, 1, "application/json", `{"three":3}`)
	if m.Size != 11 || m.ContentType != "application/json" {
		t.Errorf("mock after replacements: %+v", m)
	}
	vs := versions(t, s, 1)
	if got := numbers(vs); got != "3* 2 1" {
		t.Fatalf("versions = %s, want 3* 2 1", got)
	}
	want := []struct {
		ct, data string
	}{{"application/json", `{"three":3}`}, {"text/csv", "a,b\n1,2\n"}, {"application/json", `[1]`}}
	for i, w := range want {
		v := vs[i]
		if v.ContentType != w.ct || v.Size != int64(len(w.data)) || v.ETag != etagOf(w.data) {
			t.Errorf("version %d = %+v, want %s %q", v.Version, v, w.ct, w.data)
		}
		got, data, err := versionData(t, s, 1, v.Version)
		if err != nil || data != w.data || got.ContentType != w.ct || got.Current != (i == 0) || got.Version != v.Version {
			t.Errorf("FindVersionData(%d) = %+v, %q, %v; want %q", v.Version, got, data, err, w.data)
		}
	}
	if vs[0].CreatedAt.Before(vs[1].CreatedAt) || vs[1].CreatedAt.Before(vs[2].CreatedAt) {
		t.Errorf("versions not newest first in time: %+v", vs)
	}
	if d, _ := find(t, s, 1); d != `{"three":3}` {
		t.Errorf("current data = %q", d)
	}
	if n, err := s.VersionBytes(ctx, id(1)); err != nil || n != 3+8+11 {
		t.Errorf("VersionBytes = %d, %v; want %d", n, err, 3+8+11)
	}
}

// The writer of each version is the actor of its write's context.
func testVersionActor(t *testing.T, s VersionBackend) {
	alice := decoy.Actor{Kind: "user", ID: "u-1", Label: "alice@example.com"}
	ci := decoy.Actor{Kind: "key", ID: "k-1", Label: "ci"}
	ctx := decoy.WithActor(context.Background(), alice)
	if _, err := s.CreateMock(ctx, &decoy.Mock{ID: id(1), ContentType: "application/json", Status: 200}, bytesOf(`1`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReplaceMockData(decoy.WithActor(context.Background(), ci), id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(`2`)}); err != nil {
		t.Fatal(err)
	}
	replaceV(t, s, 1, "application/json", `3`) // no actor: the server admin
	vs := versions(t, s, 1)
	if len(vs) != 3 || vs[0].Actor != decoy.ServerAdmin || vs[1].Actor != ci || vs[2].Actor != alice {
		t.Errorf("actors = %+v", vs)
	}
}

// Past the bound, each write forgets the oldest versions, and only they.
func testVersionBound(t *testing.T, s VersionBackend) {
	createV(t, s, 1, `"v1"`)
	createV(t, s, 2, `"other"`)
	for i := 2; i <= 7; i++ {
		replaceV(t, s, 1, "application/json", fmt.Sprintf(`"v%d"`, i))
	}
	if got := numbers(versions(t, s, 1)); got != "7* 6 5" {
		t.Errorf("versions = %s, want 7* 6 5", got)
	}
	for v := int64(1); v <= 4; v++ {
		_, _, err := versionData(t, s, 1, v)
		wantCode(t, err, decoy.ENOTFOUND)
		if msg := decoy.ErrorMessage(err); msg != "Version not found" {
			t.Errorf("version %d: %q", v, msg)
		}
	}
	for v := int64(5); v <= 7; v++ {
		if _, data, err := versionData(t, s, 1, v); err != nil || data != fmt.Sprintf(`"v%d"`, v) {
			t.Errorf("version %d = %q, %v", v, data, err)
		}
	}
	if n, _ := s.VersionBytes(context.Background(), id(1)); n != 12 {
		t.Errorf("VersionBytes = %d, want 12", n)
	}
	// Another mock's versions are its own.
	if got := numbers(versions(t, s, 2)); got != "1*" {
		t.Errorf("other mock's versions = %s", got)
	}
}

// A bound of one keeps the current data only.
func testVersionBoundOfOne(t *testing.T, s VersionBackend) {
	createV(t, s, 1, `1`)
	replaceV(t, s, 1, "application/json", `2`)
	if got := numbers(versions(t, s, 1)); got != "2*" {
		t.Errorf("versions = %s, want 2*", got)
	}
	if d, _ := find(t, s, 1); d != `2` {
		t.Errorf("data = %q", d)
	}
}

func testVersionNotFound(t *testing.T, s VersionBackend) {
	ctx := context.Background()
	_, err := s.MockVersions(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	_, _, err = s.FindVersionData(ctx, id(9), 1)
	wantCode(t, err, decoy.ENOTFOUND)
	if msg := decoy.ErrorMessage(err); msg != "Mock api not found" {
		t.Errorf("version of no mock: %q", msg)
	}
	_, err = s.VersionBytes(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	createV(t, s, 1, `[]`)
	for _, v := range []int64{0, -1, 2, 1 << 62} {
		_, _, err = s.FindVersionData(ctx, id(1), v)
		wantCode(t, err, decoy.ENOTFOUND)
		if msg := decoy.ErrorMessage(err); msg != "Version not found" {
			t.Errorf("version %d: %q", v, msg)
		}
	}
}

// A deleted mock's versions go with it; a mock made again under its id
// starts from version 1.
func testVersionDelete(t *testing.T, s VersionBackend) {
	ctx := context.Background()
	createV(t, s, 1, `1`)
	replaceV(t, s, 1, "application/json", `2`)
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	_, err := s.MockVersions(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
	_, _, err = s.FindVersionData(ctx, id(1), 1)
	wantCode(t, err, decoy.ENOTFOUND)
	createV(t, s, 1, `"again"`)
	if got := numbers(versions(t, s, 1)); got != "1*" {
		t.Errorf("versions of the mock made again = %s", got)
	}
	if _, data, err := versionData(t, s, 1, 1); err != nil || data != `"again"` {
		t.Errorf("version 1 = %q, %v", data, err)
	}
}

// Documents of several chunks and empty ones keep byte for byte.
func testVersionLarge(t *testing.T, s VersionBackend) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16+3) // over 5 MiB
	big[0], big[len(big)-1] = '"', '"'
	if _, err := s.CreateMock(context.Background(), &decoy.Mock{ID: id(1), ContentType: "application/json", Status: 200},
		decoy.Data{Bytes: big}); err != nil {
		t.Fatal(err)
	}
	replaceV(t, s, 1, "application/json", "")
	replaceV(t, s, 1, "application/json", `[1]`)
	if _, data, err := versionData(t, s, 1, 1); err != nil || data != string(big) {
		t.Errorf("large version: %d bytes, %v; want %d", len(data), err, len(big))
	}
	if _, data, err := versionData(t, s, 1, 2); err != nil || data != "" {
		t.Errorf("empty version = %q, %v", data, err)
	}
	if d, _ := find(t, s, 1); d != `[1]` {
		t.Errorf("current data = %q", d)
	}
}

// Concurrent writes of one mock's data each get a version of their own,
// numbered without gaps, and the bound holds.
func testVersionConcurrent(t *testing.T, s VersionBackend) {
	createV(t, s, 1, `0`)
	const writers = 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 1; i <= writers; i++ {
		wg.Go(func() {
			_, err := s.ReplaceMockData(context.Background(), id(1), decoy.MockData{ContentType: "application/json", Data: bytesOf(fmt.Sprint(i))})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	vs := versions(t, s, 1)
	if got := numbers(vs); got != "13* 12 11 10 9" {
		t.Errorf("versions = %s, want 13* 12 11 10 9", got)
	}
	_, data, err := versionData(t, s, 1, 13)
	if cur, _ := find(t, s, 1); err != nil || data != cur {
		t.Errorf("the newest version holds %q, the mock %q (%v)", data, cur, err)
	}
}

// A change of settings is not a data write: it makes no version.
func testSettingsAreNotVersions(t *testing.T, s VersionBackend) {
	createV(t, s, 1, `1`)
	if _, err := s.UpdateMock(context.Background(), id(1), decoy.MockUpdate{Name: ptr("renamed"), Status: ptr(201)}); err != nil {
		t.Fatal(err)
	}
	if got := numbers(versions(t, s, 1)); got != "1*" {
		t.Errorf("versions after a settings change = %s", got)
	}
}

// What FindVersionData returned stays readable whole while its version is
// forgotten and its mock deleted.
func testVersionDataOutlivesPrune(t *testing.T, s VersionBackend) {
	ctx := context.Background()
	createV(t, s, 1, `[1,2,3]`)
	_, d, err := s.FindVersionData(ctx, id(1), 1)
	if err != nil {
		t.Fatal(err)
	}
	replaceV(t, s, 1, "application/json", `2`)
	replaceV(t, s, 1, "application/json", `3`) // past the bound of 2: version 1 goes
	if _, _, err := s.FindVersionData(ctx, id(1), 1); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Fatalf("version 1 still kept: %v", err)
	}
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d); got != `[1,2,3]` {
		t.Errorf("version read after it was forgotten: %q", got)
	}
}
