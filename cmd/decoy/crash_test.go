package main_test

// Crash safety: decoy is killed with SIGKILL while admin writes and reads
// are in flight, then started again on the same store. An admin write is
// acknowledged only once durable, so every write a client saw acknowledged
// must be there after the restart; a quota count may lack at most the reads
// that were in flight at the kill.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/sqlite" // also registers the driver for the integrity check
	"github.com/google/uuid"
)

const (
	crashRounds  = 3
	crashMocks   = 6 // mocks written and read in every round
	crashReaders = 4
)

// kill ends the process with SIGKILL and waits until it is gone, so that the
// harness's stop, at cleanup, finds it exited.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

func TestKillDuringAdminWrites(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testCrashRounds(t, dir, filepath.Join(dir, sqlite.FileName))
	})
	t.Run("postgres", func(t *testing.T) {
		db := postgresURL(t)
		testCrashRounds(t, t.TempDir(), "", "--database-url", db)
	})
}

// crashMock is a mock that every round writes (its data and its name, each
// carrying a sequence number) and reads.
type crashMock struct {
	id string
	// The sequence numbers of the last write sent and the last one
	// acknowledged. One writer each, so at most one write is in flight.
	dataSent, dataAcked atomic.Int64
	nameSent, nameAcked atomic.Int64
	// The reads of all rounds: sent, answered (with any status), answered
	// 200.
	readsSent, readsAnswered, reads200 atomic.Int64
}

// churnMock is a mock created, and maybe deleted, by a round.
type churnMock struct {
	id          string
	createAcked bool
	deleteSent  bool
	deleteAcked bool
}

// crashRun is the load of one round, until the kill.
type crashRun struct {
	t      *testing.T
	admin  *client.Client
	hc     *http.Client
	base   string
	mocks  []*crashMock
	killed atomic.Bool
	// progress is closed when a first write of the round was acknowledged,
	// firstAck after the load started.
	progress     chan struct{}
	progressOnce sync.Once
	began        time.Time
	firstAck     time.Duration

	mu    sync.Mutex
	churn []*churnMock

	creates, deletes atomic.Int64 // acknowledged in this round
}

// testCrashRounds runs crashRounds rounds of load, kill and restart on one
// store. dbFile, when set, is the SQLite file to check for corruption.
func testCrashRounds(t *testing.T, dataDir, dbFile string, args ...string) {
	args = append([]string{"--admin-token", adminToken, "--rate-limit", "0", "--monthly-quota", "0"}, args...)
	p := start(t, dataDir, args...)
	month := decoy.Month(time.Now())
	var mocks []*crashMock
	for range crashMocks {
		m := createMock(t, p, crashData(0), client.CreateOptions{Name: "seq-0"})
		mocks = append(mocks, &crashMock{id: m.ID})
	}
	var churn []*churnMock
	for round := 1; round <= crashRounds; round++ {
		run := &crashRun{t: t, base: p.url, mocks: mocks, churn: churn, progress: make(chan struct{})}
		run.hc = killedClient(t, &run.killed)
		run.admin = &client.Client{BaseURL: p.url, AdminToken: adminToken, HTTP: run.hc}
		// Sums over the mocks: sequences acknowledged, reads answered 200,
		// reads in flight.
		sums := func() (acked, reads, inFlight int64) {
			for _, m := range mocks {
				acked += m.dataAcked.Load() + m.nameAcked.Load()
				reads += m.reads200.Load()
				inFlight += m.readsSent.Load() - m.readsAnswered.Load()
			}
			return acked, reads, inFlight
		}
		acked0, reads0, inFlight0 := sums()
		killAfter := 200*time.Millisecond + rand.N(600*time.Millisecond)
		run.load(p, killAfter)
		run.hc.CloseIdleConnections()
		acked, reads, inFlight := sums()
		acked, reads, inFlight = acked-acked0, reads-reads0, inFlight-inFlight0
		p = start(t, dataDir, args...)
		if dbFile != "" {
			checkSQLite(t, dbFile)
		}
		churn = run.verify(t, p, month)
		t.Logf("round %d: first write acknowledged after %v, killed %v later; acknowledged before the kill: %d data and name writes, %d creates, %d deletes, %d reads; %d reads in flight",
			round, run.firstAck.Round(time.Millisecond), killAfter.Round(time.Millisecond), acked, run.creates.Load(), run.deletes.Load(), reads, inFlight)
		if run.creates.Load() == 0 && acked == 0 {
			t.Errorf("round %d: no write was acknowledged before the kill; the round tested nothing", round)
		}
		if s := p.stderr.String(); strings.Contains(s, "level=ERROR") {
			t.Errorf("round %d: errors logged after the restart:\n%s", round, s)
		}
	}
}

// crashData is the document of data write seq, padded to a few KiB.
func crashData(seq int64) string {
	return fmt.Sprintf(`{"seq":%d,"pad":%q}`, seq, strings.Repeat("x", 4096))
}

// load runs writers, creators, a deleter and readers against p, and kills p
// killAfter after the first acknowledged write.
func (r *crashRun) load(p *proc, killAfter time.Duration) {
	ctx := context.Background()
	r.began = time.Now()
	var wg sync.WaitGroup
	for _, m := range r.mocks {
		wg.Go(func() {
			for !r.killed.Load() {
				seq := m.dataSent.Add(1)
				_, err := r.admin.ReplaceData(ctx, m.id, strings.NewReader(crashData(seq)), "application/json")
				if !r.acked("PUT data", err) {
					return
				}
				m.dataAcked.Store(seq)
			}
		})
		wg.Go(func() {
			for !r.killed.Load() {
				seq := m.nameSent.Add(1)
				_, err := r.admin.UpdateMock(ctx, m.id, map[string]any{"name": "seq-" + strconv.FormatInt(seq, 10)})
				if !r.acked("PATCH name", err) {
					return
				}
				m.nameAcked.Store(seq)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for !r.killed.Load() {
				c := &churnMock{id: uuid.NewString()}
				r.mu.Lock()
				r.churn = append(r.churn, c)
				r.mu.Unlock()
				_, err := r.admin.CreateMock(ctx, strings.NewReader(`[{"churn":true}]`), client.CreateOptions{ID: c.id})
				if !r.acked("POST", err) {
					return
				}
				r.mu.Lock()
				c.createAcked = true
				r.mu.Unlock()
				r.creates.Add(1)
			}
		})
	}
	wg.Go(func() {
		for !r.killed.Load() {
			var c *churnMock
			r.mu.Lock()
			for _, x := range r.churn {
				if x.createAcked && !x.deleteSent {
					c = x
					c.deleteSent = true
					break
				}
			}
			r.mu.Unlock()
			if c == nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			err := r.admin.DeleteMock(ctx, c.id)
			if !r.acked("DELETE", err) {
				return
			}
			r.mu.Lock()
			c.deleteAcked = true
			r.mu.Unlock()
			r.deletes.Add(1)
			time.Sleep(10 * time.Millisecond) // a few deletes, many creates
		}
	})
	for i := range crashReaders {
		wg.Go(func() {
			for k := i; !r.killed.Load(); k++ {
				m := r.mocks[k%len(r.mocks)]
				m.readsSent.Add(1)
				resp, err := r.hc.Get(r.base + "/mock/" + m.id)
				if err != nil {
					if !r.killed.Load() {
						r.t.Errorf("read before the kill: %v", err)
					}
					return
				}
				// The status came, so the server had counted the read.
				m.readsAnswered.Add(1)
				if resp.StatusCode == http.StatusOK {
					m.reads200.Add(1)
				} else {
					r.t.Errorf("read of %s: %d", m.id, resp.StatusCode)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	select {
	case <-r.progress:
	case <-time.After(10 * time.Second):
		r.t.Error("no write was acknowledged within 10 s")
	}
	time.Sleep(killAfter)
	r.killed.Store(true)
	p.kill()
	wg.Wait()
}

// acked reports whether an admin call was acknowledged. A refusal is a test
// failure; a transport error is one only before the kill.
func (r *crashRun) acked(what string, err error) bool {
	var ce *client.Error
	switch {
	case err == nil:
		r.progressOnce.Do(func() {
			r.firstAck = time.Since(r.began)
			close(r.progress)
		})
		return true
	case errors.As(err, &ce):
		r.t.Errorf("%s answered %v", what, err)
	case !r.killed.Load():
		r.t.Errorf("%s before the kill: %v", what, err)
	}
	return false
}

// verify checks, on the restarted p, that every acknowledged write is there
// and that the quota counts are within bounds, then takes what it found as
// the state the next round starts from. It returns the churned mocks that
// still exist.
func (r *crashRun) verify(t *testing.T, p *proc, month string) []*churnMock {
	t.Helper()
	ctx := context.Background()
	admin := p.admin()
	checkUsage := decoy.Month(time.Now()) == month
	for _, m := range r.mocks {
		_, data, err := admin.Data(ctx, m.id)
		var doc struct{ Seq int64 }
		if err != nil || json.Unmarshal(data, &doc) != nil {
			t.Fatalf("data of %s after the restart: %v %.100s", m.id, err, data)
		}
		if acked, sent := m.dataAcked.Load(), m.dataSent.Load(); doc.Seq < acked || doc.Seq > sent {
			t.Errorf("data of %s: sequence %d after the restart; %d was acknowledged, %d the last sent", m.id, doc.Seq, acked, sent)
		}
		m.dataAcked.Store(doc.Seq)

		got, err := admin.GetMock(ctx, m.id)
		if err != nil {
			t.Fatalf("mock %s after the restart: %v", m.id, err)
		}
		seq, err := strconv.ParseInt(strings.TrimPrefix(got.Name, "seq-"), 10, 64)
		if acked, sent := m.nameAcked.Load(), m.nameSent.Load(); err != nil || seq < acked || seq > sent {
			t.Errorf("name of %s: %q after the restart; seq-%d was acknowledged, seq-%d the last sent", m.id, got.Name, acked, sent)
		}
		m.nameAcked.Store(seq)

		u, err := admin.Usage(ctx, m.id)
		if err != nil {
			t.Fatalf("usage of %s: %v", m.id, err)
		}
		// Over all rounds so far, as a count in flight at one kill may
		// still reach PostgreSQL after the restart: the backend of a killed
		// client finishes the statement it is running.
		sent, ok, inFlight := m.readsSent.Load(), m.reads200.Load(), m.readsSent.Load()-m.readsAnswered.Load()
		used := u.Month.Used
		switch {
		case !checkUsage:
		case used < ok-inFlight || used > sent:
			t.Errorf("usage of %s is %d; %d reads sent, %d answered 200, %d in flight at a kill", m.id, used, sent, ok, inFlight)
		case used < ok:
			t.Logf("usage of %s is %d: %d of the %d reads answered 200 were not counted (%d were in flight at a kill)", m.id, used, ok-used, ok, inFlight)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	var kept []*churnMock
	for _, c := range r.churn {
		_, err := admin.GetMock(ctx, c.id)
		var ce *client.Error
		exists := err == nil
		if err != nil && (!errors.As(err, &ce) || ce.Status != http.StatusNotFound) {
			t.Fatalf("mock %s after the restart: %v", c.id, err)
		}
		switch {
		case c.deleteAcked && exists:
			t.Errorf("mock %s exists after the restart, but its delete was acknowledged", c.id)
		case c.createAcked && !c.deleteSent && !exists:
			t.Errorf("mock %s is gone after the restart, but its create was acknowledged", c.id)
		}
		// A delete in flight at the kill may still reach PostgreSQL after
		// the restart, as may a create that is not there yet: such mocks
		// are left alone from now on.
		if exists && !c.deleteSent {
			kept = append(kept, &churnMock{id: c.id, createAcked: true})
		}
	}
	return kept
}

// checkSQLite runs SQLite's integrity check on the database file, beside
// the running server.
func checkSQLite(t *testing.T, file string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?_query_only=1&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity check of %s: %q %v", file, res, err)
	}
}

// A restart, graceful or by SIGKILL, keeps each mock's rate window: the
// reads of the last minute still count against its limit.
func TestRateWindowSurvivesRestarts(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--rate-limit", "3")
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{})
	for i := range 2 {
		if a := get(t, p.url+"/mock/"+m.ID); a.status != 200 {
			t.Fatalf("read %d: %d %s", i, a.status, a.body)
		}
	}
	p.kill()
	p = start(t, dir, "--admin-token", adminToken, "--rate-limit", "3")
	if a := get(t, p.url+"/mock/"+m.ID); a.status != 200 {
		t.Fatalf("third read after SIGKILL: %d %s", a.status, a.body)
	}
	if a := get(t, p.url+"/mock/"+m.ID); a.status != 429 {
		t.Fatalf("fourth read within the minute, after SIGKILL: %d, want 429", a.status)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	p = start(t, dir, "--admin-token", adminToken, "--rate-limit", "3")
	a := get(t, p.url+"/mock/"+m.ID)
	if a.status != 429 || a.header.Get("Retry-After") == "" {
		t.Fatalf("read within the minute, after a graceful stop: %d (Retry-After %q), want 429", a.status, a.header.Get("Retry-After"))
	}
}
