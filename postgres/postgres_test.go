package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/postgres"
	"github.com/decoy-mock/decoy/storetest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }

// baseURL returns the URL of the test server: DECOY_TEST_POSTGRES_URL, or a
// private one (see testservice). It must be a postgres:// URL, as newSchema
// adds to its query.
func baseURL(t *testing.T) string {
	t.Helper()
	return testservice.PostgresURL(t)
}

// newSchema creates an empty schema, dropped when the test ends, and returns
// its name and the URL of a store kept in it.
func newSchema(t *testing.T) (schema, storeURL string) {
	t.Helper()
	base := baseURL(t)
	ctx := context.Background()
	exec := func(sql string) {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	schema = "decoy_test_" + hex.EncodeToString(randomBytes(8))
	exec("CREATE SCHEMA " + schema)
	t.Cleanup(func() { exec("DROP SCHEMA " + schema + " CASCADE") })

	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema) // pgx sends unknown parameters as run-time settings
	u.RawQuery = q.Encode()
	return schema, u.String()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func open(t *testing.T, storeURL string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// query runs sql on its own connection to the test server and scans one row.
func query(t *testing.T, sql string, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, baseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatal(err)
	}
}

func TestStore(t *testing.T) {
	baseURL(t)
	t.Run("InMemory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Backend {
			_, u := newSchema(t)
			return open(t, u)
		})
	})
	t.Run("Spilled", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Backend {
			_, u := newSchema(t)
			db := open(t, u)
			db.SpillDir = t.TempDir()
			return db
		})
	})
}

func TestBatch(t *testing.T) {
	baseURL(t)
	storetest.RunBatch(t, func(t *testing.T) storetest.BatchBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}

var testMock = decoy.Mock{ID: "11111111-1111-4111-8111-111111111111", ContentType: "application/json", Status: 200}

// The tables land in the schema named by search_path in the URL, which is
// what keeps the tests (and deployments sharing a database) apart.
func TestSearchPath(t *testing.T) {
	schema, u := newSchema(t)
	db := open(t, u)
	if _, err := db.CreateMock(context.Background(), &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	var n int
	query(t, "SELECT count(*) FROM "+schema+".mocks", &n)
	if n != 1 {
		t.Errorf("%s.mocks has %d rows, want 1", schema, n)
	}
}

// Replicas starting together against an empty schema all open it, and each
// migration is applied once, whatever the server's default isolation level.
func TestConcurrentMigration(t *testing.T) {
	tests := []struct {
		name   string
		params string // added to the URL
	}{
		{name: "ReadCommitted"},
		// A snapshot taken before the lock would miss the migrations
		// applied while waiting for it.
		{name: "RepeatableReadDefault", params: "&default_transaction_isolation=repeatable%20read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, u := newSchema(t)
			u += tt.params
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() {
					db, err := postgres.Open(context.Background(), u)
					if err == nil {
						db.Close()
					}
					errs[i] = err
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			var names []string
			query(t, "SELECT array_agg(name ORDER BY name) FROM "+schema+".schema_migrations", &names)
			want := append(migrationNames(t), postgres.GoMigrations()...)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("applied migrations = %q", names)
			}
			// And opening again applies nothing.
			open(t, u)
		})
	}
}

// Times are kept to the millisecond, like the sqlite store, in UTC, and come
// back from every method equal to what was stored.
func TestTimes(t *testing.T) {
	_, u := newSchema(t)
	db := open(t, u)
	ctx := context.Background()
	now := time.Date(2026, 11, 5, 12, 30, 15, 123456789, time.FixedZone("X", 3600))
	db.Now = func() time.Time { return now }
	want := time.Date(2026, 11, 5, 11, 30, 15, 123000000, time.UTC)

	created, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	found, err := db.FindMock(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*decoy.Mock{created, found} {
		if m.CreatedAt != want || m.UpdatedAt != want {
			t.Errorf("times = %v, %v, want %v in UTC", m.CreatedAt, m.UpdatedAt, want)
		}
	}

	now = now.Add(time.Hour)
	updated, err := db.UpdateMock(ctx, testMock.ID, decoy.MockUpdate{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.CreatedAt != want || updated.UpdatedAt != want.Add(time.Hour) || updated.Version != created.Version+1 {
		t.Errorf("after an empty update: %+v", updated)
	}
}

// Two stores on one schema stand for two replicas: together they grant
// exactly the quota, each count once.
func TestQuotaAcrossStores(t *testing.T) {
	_, u := newSchema(t)
	dbs := []*postgres.DB{open(t, u), open(t, u)}
	ctx := context.Background()
	if _, err := dbs[0].CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	const limit = 37
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		granted []int64
		errs    []error
	)
	for g := range 8 {
		db := dbs[g%len(dbs)]
		wg.Go(func() {
			for range 20 {
				used, ok, err := db.ReserveQuota(ctx, testMock.ID, "2026-11", limit)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case ok:
					granted = append(granted, used)
				case used != limit:
					errs = append(errs, fmt.Errorf("refused with used = %d", used))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	slices.Sort(granted)
	var want []int64
	for i := range int64(limit) {
		want = append(want, i+1)
	}
	if !slices.Equal(granted, want) {
		t.Errorf("granted counts %v, want 1 to %d once each", granted, limit)
	}
	for _, db := range dbs {
		if used, err := db.QuotaUsed(ctx, testMock.ID, "2026-11"); used != limit || err != nil {
			t.Errorf("used = %d, %v", used, err)
		}
	}
}

// A server that cannot be reached gives EUNAVAILABLE, within the connect
// timeout. These need no PostgreSQL server.
func TestOpenUnreachable(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		timeout string // connect_timeout in the URL, "" for the default
		within  time.Duration
	}{
		// The bounds leave a second for a machine under load: a refused
		// connection has been seen to take the whole timeout there.
		{name: "Refused", addr: closedPort(t), timeout: "1", within: 2 * time.Second},
		{name: "Silent", addr: silentServer(t), timeout: "1", within: 2 * time.Second},
		{name: "SilentDefaultTimeout", addr: silentServer(t), within: postgres.DefaultConnectTimeout + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := "postgres://postgres@" + tt.addr + "/test?sslmode=disable"
			if tt.timeout != "" {
				u += "&connect_timeout=" + tt.timeout
			}
			start := time.Now()
			db, err := postgres.Open(context.Background(), u)
			if err == nil {
				db.Close()
			}
			if took := time.Since(start); took > tt.within {
				t.Errorf("Open took %v, want at most %v", took, tt.within)
			}
			if code := decoy.ErrorCode(err); code != decoy.EUNAVAILABLE {
				t.Errorf("Open: %v has code %q, want %q", err, code, decoy.EUNAVAILABLE)
			}
		})
	}
}

// A store whose server goes away answers EUNAVAILABLE, from Ping and from the
// other methods, whether it finds its idle connections dead or cannot make
// new ones.
func TestLostServer(t *testing.T) {
	_, u := newSchema(t)
	ctx := context.Background()
	// Migrate directly, then reach the server only through a proxy that can
	// be cut.
	open(t, u)
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, parsed.Host)
	parsed.Host = p.addr()
	q := parsed.Query()
	q.Set("connect_timeout", "1")
	parsed.RawQuery = q.Encode()
	db := open(t, parsed.String())
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping through the proxy: %v", err)
	}
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}

	p.cut()
	start := time.Now()
	err = db.Ping(ctx)
	if code := decoy.ErrorCode(err); code != decoy.EUNAVAILABLE {
		t.Errorf("Ping after the cut: %v has code %q, want %q", err, code, decoy.EUNAVAILABLE)
	}
	_, err = db.FindMock(ctx, testMock.ID)
	if code := decoy.ErrorCode(err); code != decoy.EUNAVAILABLE {
		t.Errorf("FindMock after the cut: %v has code %q, want %q", err, code, decoy.EUNAVAILABLE)
	}
	_, _, err = db.ReserveQuota(ctx, testMock.ID, "2026-11", 1)
	if code := decoy.ErrorCode(err); code != decoy.EUNAVAILABLE {
		t.Errorf("ReserveQuota after the cut: %v has code %q, want %q", err, code, decoy.EUNAVAILABLE)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("failing took %v", took)
	}
	// The client is shown a message, not the cause.
	if msg := decoy.ErrorMessage(err); msg != "The database is unavailable; try again later" {
		t.Errorf("message = %q", msg)
	}
}

// A closed store answers EUNAVAILABLE too: the server may be shutting down.
func TestClosed(t *testing.T) {
	_, u := newSchema(t)
	db, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = db.FindMock(context.Background(), testMock.ID)
	if code := decoy.ErrorCode(err); code != decoy.EUNAVAILABLE {
		t.Errorf("FindMock on a closed store: %v has code %q", err, code)
	}
}

// A canceled request is not the database's fault.
func TestCanceled(t *testing.T) {
	_, u := newSchema(t)
	db := open(t, u)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := db.FindMock(ctx, testMock.ID)
	if code := decoy.ErrorCode(err); code != decoy.EINTERNAL {
		t.Errorf("canceled FindMock: %v has code %q, want %q", err, code, decoy.EINTERNAL)
	}
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentServer returns the address of a server that accepts connections and
// never answers, as a host behind a black-holing firewall would.
func silentServer(t *testing.T) string {
	p := newProxy(t, "")
	return p.addr()
}

// proxy forwards TCP connections to upstream until cut, when it stops
// listening and drops every connection, as a crashed server would. With no
// upstream it holds connections open and never answers.
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func newProxy(t *testing.T, upstream string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if upstream == "" {
				p.keep(c)
				continue
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.keep(c, up)
			go io.Copy(up, c)
			go io.Copy(c, up)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

// keep records conns to be closed by cut, or closes them if cut already ran.
func (p *proxy) keep(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return
	}
	p.conns = append(p.conns, conns...)
}

func (p *proxy) cut() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Counts of months past decoy.MonthsKept are deleted once a newer month
// is counted, in the background: a row of every mock and workspace read
// stayed for every month, for ever (found by an audit).
func TestQuotaPrunesOldMonths(t *testing.T) {
	_, u := newSchema(t)
	db := open(t, u)
	ctx := context.Background()
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	// Counted with no prune: a month older than any counted since the
	// start is not a newer one.
	for _, month := range []string{"2026-07", "2026-08", "2026-09"} {
		if _, _, err := db.ReserveQuota(ctx, testMock.ID, month, 0); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := db.QuotaUsed(ctx, testMock.ID, "2026-07")
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("2026-07 still counted 10 s after 2026-09 was")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, month := range []string{"2026-08", "2026-09"} {
		if n, err := db.QuotaUsed(ctx, testMock.ID, month); err != nil || n != 1 {
			t.Errorf("%s: %d, %v; want 1 (kept)", month, n, err)
		}
	}
	if err := db.PruneQuota(ctx, "2026-09"); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.QuotaUsed(ctx, testMock.ID, "2026-08"); n != 1 {
		t.Errorf("2026-08 after a prune for 2026-09: %d, want 1", n)
	}
	// A replica whose clock runs years ahead prunes no month the
	// database's clock still counts in.
	now := decoy.Month(time.Now())
	if _, _, err := db.ReserveQuota(ctx, testMock.ID, now, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.PruneQuota(ctx, "2099-01"); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.QuotaUsed(ctx, testMock.ID, now); n != 1 {
		t.Errorf("%s after a prune for 2099-01: %d, want 1 (kept)", now, n)
	}
	if n, _ := db.QuotaUsed(ctx, testMock.ID, "2026-08"); n != 0 {
		t.Errorf("2026-08 after a prune for 2099-01: %d, want 0", n)
	}
}
