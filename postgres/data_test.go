package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
)

// document returns n bytes that differ from chunk to chunk and within
// them, so that a chunk out of order or repeated shows.
func document(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>20)
	}
	return b
}

// readAll returns the data FindMockData gave, read whole, and closes it.
func readAll(t *testing.T, d decoy.Data) []byte {
	t.Helper()
	if d.File == nil {
		return d.Bytes
	}
	defer d.File.Close()
	b, err := io.ReadAll(d.File)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Documents of several chunks (1 MiB each) come back whole and in order,
// from memory or from a spilled file, and replacing one by a document of
// fewer chunks mixes none of the old ones (kept as its previous version)
// into it.
func TestChunkedData(t *testing.T) {
	for _, spill := range []bool{false, true} {
		name := map[bool]string{false: "InMemory", true: "Spilled"}[spill]
		t.Run(name, func(t *testing.T) {
			schema, u := newSchema(t)
			db := open(t, u)
			dir := t.TempDir()
			if spill {
				db.SpillDir = dir
			}
			ctx := context.Background()
			sizes := []int{0, 1, 1 << 20, 1<<20 + 1, 5<<19 + 3, 2}
			for i, size := range sizes {
				want := document(size)
				var err error
				if i == 0 {
					_, err = db.CreateMock(ctx, &testMock, decoy.Data{Bytes: want})
				} else {
					_, err = db.ReplaceMockData(ctx, testMock.ID, decoy.MockData{ContentType: "application/octet-stream", Data: decoy.Data{Bytes: want}})
				}
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				m, d, err := db.FindMockData(ctx, testMock.ID)
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				if spill && runtime.GOOS != "windows" && d.File == nil {
					t.Errorf("size %d: data in memory, want a spilled file", size)
				}
				if !spill && d.File != nil {
					t.Errorf("size %d: data in a file without a SpillDir", size)
				}
				if got := readAll(t, d); !bytes.Equal(got, want) || m.Size != int64(size) {
					t.Errorf("size %d: got %d bytes (size %d), equal %v", size, len(got), m.Size, bytes.Equal(got, want))
				}
				var chunks int
				query(t, "SELECT count(*) FROM "+schema+".mock_chunks c JOIN "+schema+".mocks m ON m.id = c.mock_id AND m.data_version = c.version", &chunks)
				if wantChunks := (size + 1<<20 - 1) >> 20; chunks != wantChunks {
					t.Errorf("size %d: %d chunks stored, want %d", size, chunks, wantChunks)
				}
			}
			// Spilled files are removed as they are made: nothing is
			// left in the folder, open or not.
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%d files left in SpillDir", len(left))
			}
		})
	}
}

// A store written before documents were chunked (migrations 0001 and 0002,
// data in mock_data) opens with its documents, of any size, unchanged.
func TestMigrateToChunks(t *testing.T) {
	schema, u := newSchema(t)
	ctx := context.Background()
	conn := connect(t, u)
	for _, name := range []string{"0001_init.sql", "0002_studio.sql"} {
		sql, err := os.ReadFile("migration/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (name) VALUES ('0001_init.sql'), ('0002_studio.sql')`); err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{
		"00000000-0000-4000-8000-000000000001": {},
		"00000000-0000-4000-8000-000000000002": []byte(`[{"a":1}]`),
		"00000000-0000-4000-8000-000000000003": document(1 << 20),
		"00000000-0000-4000-8000-000000000004": document(2<<20 + 5),
	}
	for id, data := range docs {
		if _, err := conn.Exec(ctx, `INSERT INTO mocks (id, content_type, size, etag, created_at, updated_at)
			VALUES ($1, 'application/json', $2, '"e"', now(), now())`, id, len(data)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO mock_data (mock_id, data) VALUES ($1, $2)`, id, data); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)

	db := open(t, u)
	db.SpillDir = t.TempDir()
	for id, want := range docs {
		_, d, err := db.FindMockData(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := readAll(t, d); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes after the migration, want %d", id, len(got), len(want))
		}
	}
	var left int
	query(t, "SELECT count(*) FROM information_schema.tables WHERE table_schema = '"+schema+"' AND table_name = 'mock_data'", &left)
	if left != 0 {
		t.Error("mock_data still there after the migration")
	}
}

// connect opens a connection to url, closed when the test ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// A spill folder that went is made again; one that cannot be written to
// does not fail reads: the document is read into memory, and SpillFailed
// says so.
func TestSpillFallback(t *testing.T) {
	_, u := newSchema(t)
	db := open(t, u)
	ctx := context.Background()
	want := document(3<<20 + 7)
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: want}); err != nil {
		t.Fatal(err)
	}
	var failures []error
	db.SpillFailed = func(err error) { failures = append(failures, err) }

	gone := filepath.Join(t.TempDir(), "gone")
	db.SpillDir = gone
	_, d, err := db.FindMockData(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && d.File == nil || !bytes.Equal(readAll(t, d), want) || len(failures) != 0 {
		t.Errorf("spill folder gone: file %v, failures %v", d.File != nil, failures)
	}

	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db.SpillDir = filepath.Join(notDir, "sub")
	_, d, err = db.FindMockData(ctx, testMock.ID)
	if err != nil {
		t.Fatalf("unwritable spill folder failed the read: %v", err)
	}
	if d.File != nil || !bytes.Equal(readAll(t, d), want) {
		t.Errorf("unwritable spill folder: file %v, %d bytes", d.File != nil, len(readAll(t, d)))
	}
	if runtime.GOOS != "windows" && len(failures) != 1 {
		t.Errorf("SpillFailed called %d times, want 1", len(failures))
	}
}

// Documents under SpillMinSize are read into memory, the others spilled.
func TestSpillMinSize(t *testing.T) {
	_, u := newSchema(t)
	db := open(t, u)
	db.SpillDir = t.TempDir()
	db.SpillMinSize = 64 << 10
	ctx := context.Background()
	for i, size := range []int{0, 100, 64<<10 - 1, 64 << 10} {
		m := testMock
		m.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i+100)
		want := document(size)
		if _, err := db.CreateMock(ctx, &m, decoy.Data{Bytes: want}); err != nil {
			t.Fatal(err)
		}
		_, d, err := db.FindMockData(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		spilled := d.File != nil
		if got := readAll(t, d); !bytes.Equal(got, want) {
			t.Fatalf("size %d: %d bytes back", size, len(got))
		}
		if wantSpilled := int64(size) >= db.SpillMinSize && runtime.GOOS != "windows"; spilled != wantSpilled {
			t.Errorf("size %d: spilled %v, want %v", size, spilled, wantSpilled)
		}
	}
}
