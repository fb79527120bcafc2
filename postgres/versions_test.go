package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/storetest"
)

func TestVersionStore(t *testing.T) {
	baseURL(t)
	for _, spilled := range []bool{false, true} {
		t.Run(fmt.Sprintf("Spilled=%v", spilled), func(t *testing.T) {
			storetest.RunVersions(t, func(t *testing.T, maxVersions int) storetest.VersionBackend {
				_, u := newSchema(t)
				db := open(t, u)
				db.MaxVersions = maxVersions
				if spilled {
					db.SpillDir = t.TempDir()
				}
				return db
			})
		})
	}
}

// At the default bound, 21 writes keep 20 versions: the chunks of the
// first go with its row, those of the 20 others stay, and a deleted mock
// leaves none.
func TestVersionBoundChunks(t *testing.T) {
	ctx := context.Background()
	schema, u := newSchema(t)
	db := open(t, u)
	if db.MaxVersions != decoy.DefaultMaxVersions || decoy.DefaultMaxVersions != 20 {
		t.Fatalf("MaxVersions = %d by default, want 20", db.MaxVersions)
	}
	// Two chunks each (see chunkSize), so that a version is several rows.
	doc := func(i int) []byte {
		b := make([]byte, 1<<20+10)
		for k := range b {
			b[k] = 'a'
		}
		b[0], b[len(b)-1] = '"', '"'
		b[1] = byte('0' + i%10)
		return b
	}
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: doc(1)}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 21; i++ {
		if _, err := db.ReplaceMockData(ctx, testMock.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: doc(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := db.MockVersions(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 20 || vs[0].Version != 21 || vs[19].Version != 2 {
		t.Errorf("%d versions kept, from %d to %d; want 20, from 21 to 2", len(vs), vs[0].Version, vs[len(vs)-1].Version)
	}
	var chunks, versions, oldest int
	query(t, "SELECT count(*), count(DISTINCT version), min(version) FROM "+schema+".mock_chunks", &chunks, &versions, &oldest)
	if chunks != 40 || versions != 20 || oldest != 2 {
		t.Errorf("mock_chunks holds %d chunks of %d versions from %d; want 40 of 20 from 2", chunks, versions, oldest)
	}
	if _, _, err := db.FindVersionData(ctx, testMock.ID, 1); decoy.ErrorMessage(err) != "Version not found" {
		t.Errorf("version 1: %v", err)
	}
	if n, err := db.VersionBytes(ctx, testMock.ID); err != nil || n != 20*int64(len(doc(1))) {
		t.Errorf("VersionBytes = %d, %v", n, err)
	}
	if err := db.DeleteMock(ctx, testMock.ID); err != nil {
		t.Fatal(err)
	}
	query(t, "SELECT count(*) FROM "+schema+".mock_chunks", &chunks)
	query(t, "SELECT count(*) FROM "+schema+".mock_versions", &versions)
	if chunks != 0 || versions != 0 {
		t.Errorf("%d chunks and %d versions left after the mock was deleted", chunks, versions)
	}
}

// A store written before versions (the migrations before 0010, the schema
// of the release without teams or versions) opens with each mock's data as
// its version 1, and goes on from there.
func TestMigrateToVersions(t *testing.T) {
	_, u := newSchema(t)
	ctx := context.Background()
	conn := connect(t, u)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, name := range migrationNames(t) {
		if name >= "0010" {
			break
		}
		sql, err := os.ReadFile("migration/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name); err != nil {
			t.Fatal(err)
		}
	}
	want := document(1<<20 + 3) // two chunks
	if _, err := conn.Exec(ctx, `INSERT INTO mocks (id, content_type, size, etag, created_at, updated_at)
		VALUES ($1, 'application/json', $2, '"e"', now(), '2026-11-01T00:00:00Z')`, testMock.ID, len(want)); err != nil {
		t.Fatal(err)
	}
	for n := 0; n*(1<<20) < len(want); n++ {
		if _, err := conn.Exec(ctx, `INSERT INTO mock_chunks (mock_id, n, data) VALUES ($1, $2, $3)`,
			testMock.ID, n, want[n<<20:min((n+1)<<20, len(want))]); err != nil {
			t.Fatal(err)
		}
	}

	db := open(t, u)
	vs, err := db.MockVersions(ctx, testMock.ID)
	if err != nil || len(vs) != 1 || vs[0].Version != 1 || !vs[0].Current || vs[0].Size != int64(len(want)) ||
		vs[0].Actor != decoy.ServerAdmin || !vs[0].CreatedAt.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("versions after the migration: %+v, %v", vs, err)
	}
	if _, err := db.ReplaceMockData(ctx, testMock.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`[]`)}}); err != nil {
		t.Fatal(err)
	}
	_, d, err := db.FindVersionData(ctx, testMock.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, d); !bytes.Equal(got, want) {
		t.Errorf("version 1: %d bytes, want %d", len(got), len(want))
	}
	_, d, err = db.FindMockData(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, d); string(got) != `[]` {
		t.Errorf("data after the migration and a replace: %q", got)
	}
}
