//go:build linux

package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/sqlite"
)

// records returns a JSON array of n records, each about 100 bytes.
func records(name string, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "%s %d", "note": "%s"}`, i, name, i, strings.Repeat("x", 50))
	}
	b.WriteString("]")
	return b.String()
}

// freeBytes returns the bytes free on the file system of dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fill writes a file at path until the file system has no byte left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		for {
			if _, err := f.Write(chunk[:size]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
}

// A full disk, on the real binary with --data-dir on a 5 MiB tmpfs: writes
// answer 507 naming the cause, /readyz 503 with the reason, nothing answers
// 500, a deletion still frees its mock's space at once; once space
// returns, everything works again without a restart, and nothing was lost,
// before or after one (quota counts included).
func TestDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", mnt).CombinedOutput(); err != nil {
		testservice.Skip(t, "full-disk", fmt.Sprintf("cannot mount a 5 MiB tmpfs (%v %s): run the tests as root", err, strings.TrimSpace(string(out))))
	}
	t.Cleanup(func() { // after the process stops, before the folder goes
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
			exec.Command("umount", "-l", mnt).Run()
		}
	})
	dir := filepath.Join(mnt, "data")
	args := []string{"--admin-token", adminToken, "--rate-limit", "0"}
	p := start(t, dir, args...)
	auth := []string{"Authorization", "Bearer " + adminToken}

	// Mocks made before the disk fills: one counted against a quota, a
	// small document (held in memory), a large one (mapped), a large one
	// to delete, and two tiny ones to delete once the disk is full again.
	docs := map[string]string{}
	counted := createMock(t, p, `{"counted": true}`, client.CreateOptions{Name: "counted", MonthlyQuota: i64(100000)})
	docs[counted.ID] = `{"counted": true}`
	small := createMock(t, p, records("small", 40), client.CreateOptions{Name: "small"})
	docs[small.ID] = records("small", 40)
	big := createMock(t, p, records("big", 3000), client.CreateOptions{Name: "big"})
	docs[big.ID] = records("big", 3000)
	goneDoc := records("gone", 6000)
	gone := createMock(t, p, goneDoc, client.CreateOptions{Name: "gone"})
	tiny := createMock(t, p, `[1]`, client.CreateOptions{Name: "tiny"})
	kept := createMock(t, p, `[2]`, client.CreateOptions{Name: "kept"})
	docs[kept.ID] = `[2]`
	served := 0
	read := func(id string) answer {
		t.Helper()
		a := get(t, p.url+"/mock/"+id)
		if id == counted.ID && a.status == 200 {
			served++
		}
		return a
	}
	for _, id := range []string{counted.ID, counted.ID, small.ID, big.ID, gone.ID} {
		if a := read(id); a.status != 200 {
			t.Fatalf("read %s before the disk filled: %d %s", id, a.status, a.body)
		}
	}

	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	t.Logf("disk full: %d bytes free", freeBytes(t, mnt))

	// Writes: 507, with a JSON error that names the cause.
	wantFull := func(what string, a answer) {
		t.Helper()
		if a.status != http.StatusInsufficientStorage || a.header.Get("Content-Type") != "application/json" ||
			!strings.Contains(a.body, "Not enough disk space") || !strings.Contains(a.body, "full") {
			t.Errorf("%s on a full disk: %d %q", what, a.status, a.body)
		}
	}
	wantFull("large upload", send(t, http.MethodPost, p.url+"/admin/v1/mocks", records("new", 3000), auth...))
	wantFull("small upload", send(t, http.MethodPost, p.url+"/admin/v1/mocks", `[1]`, auth...))
	wantFull("new data", send(t, http.MethodPut, p.url+"/admin/v1/mocks/"+small.ID+"/data", `[2]`, auth...))
	if a := send(t, http.MethodPatch, p.url+"/admin/v1/mocks/"+small.ID, `{"name":"renamed"}`, auth...); a.status != 200 {
		wantFull("settings change", a)
	}
	if a := get(t, p.url+"/readyz"); a.status != http.StatusServiceUnavailable ||
		!strings.HasPrefix(a.body, `{"error":"Store unavailable: the data directory's file system is full (`) {
		t.Errorf("/readyz on a full disk: %d %s", a.status, a.body)
	}
	signIn := func() answer {
		return send(t, http.MethodPost, p.url+"/studio/session", `{"token":"`+adminToken+`"}`, "Content-Type", "application/json")
	}
	if a := signIn(); a.status != 200 {
		wantFull("Studio sign-in", a)
	}
	// Reads of a mock with a quota: served while each is counted (the
	// journal's last page may have room), else refused naming the cause.
	refused := 0
	for range 300 {
		a := read(counted.ID)
		switch {
		case a.status == 200:
		case a.status == http.StatusServiceUnavailable && strings.Contains(a.body, "the server's disk is full"):
			refused++
		default:
			t.Fatalf("read of a mock with a quota on a full disk: %d %s", a.status, a.body)
		}
	}
	t.Logf("on the full disk: %d reads of the counted mock served, %d refused", served-2, refused)
	// Full for a while: the quota counts fail to fold into SQLite (every
	// second) and the usage history to flush (every 5 s); both keep what
	// they hold.
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.stderr.String(), "usage history not written") {
		if time.Now().After(deadline) {
			t.Fatalf("the usage history was not flushed on the full disk:\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A deletion frees its mock's space at once (its document was mapped
	// for the read above).
	before := freeBytes(t, mnt)
	if a := send(t, http.MethodDelete, p.url+"/admin/v1/mocks/"+gone.ID, "", auth...); a.status != http.StatusNoContent {
		t.Fatalf("delete on a full disk: %d %s", a.status, a.body)
	}
	after := freeBytes(t, mnt)
	t.Logf("delete: %d bytes free before, %d after (document: %d bytes)", before, after, len(goneDoc))
	if after-before < int64(len(goneDoc))-64<<10 {
		t.Errorf("the delete freed %d bytes; its document has %d", after-before, len(goneDoc))
	}
	maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", p.cmd.Process.Pid))
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", p.cmd.Process.Pid))
	for _, fd := range fds {
		if target, _ := os.Readlink(fd); strings.Contains(target, gone.ID) {
			t.Errorf("the deleted document is still open: %s", target)
		}
	}
	if strings.Contains(string(maps), gone.ID) {
		t.Error("the deleted document is still mapped")
	}
	if a := get(t, p.url+"/admin/v1/mocks/"+gone.ID, auth...); a.status != 404 {
		t.Errorf("deleted mock: %d", a.status)
	}

	// The reserve given up for it is made again from the space it gave
	// back. A deletion on a disk full again gives it up; the next, finding
	// none, answers 507 and leaves its mock whole.
	reserve := filepath.Join(dir, sqlite.ReserveFile)
	deadline = time.Now().Add(10 * time.Second)
	for st, err := os.Stat(reserve); err != nil || st.Size() != 256<<10; st, err = os.Stat(reserve) {
		if time.Now().After(deadline) {
			t.Fatalf("the reserve was not made again: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fill(t, filler)
	if a := send(t, http.MethodDelete, p.url+"/admin/v1/mocks/"+tiny.ID, "", auth...); a.status != http.StatusNoContent {
		t.Fatalf("delete on a full disk, with the reserve: %d %s", a.status, a.body)
	}
	fill(t, filler)
	wantFull("delete on a full disk, without the reserve", send(t, http.MethodDelete, p.url+"/admin/v1/mocks/"+kept.ID, "", auth...))
	if a := get(t, p.url+"/mock/"+kept.ID); a.status != 200 || a.body != `[2]` {
		t.Errorf("the mock whose deletion failed: %d %s", a.status, a.body)
	}

	// Space returns: no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if a := get(t, p.url+"/readyz"); a.status != 200 {
		t.Errorf("/readyz once space returned: %d %s", a.status, a.body)
	}
	newDoc := records("new", 3000)
	created := send(t, http.MethodPost, p.url+"/admin/v1/mocks?name=new", newDoc, auth...)
	if created.status != http.StatusCreated {
		t.Fatalf("upload once space returned: %d %s", created.status, created.body)
	}
	var m client.Mock
	if err := json.Unmarshal([]byte(created.body), &m); err != nil {
		t.Fatal(err)
	}
	docs[m.ID] = newDoc
	if a := signIn(); a.status != 200 {
		t.Errorf("Studio sign-in once space returned: %d %s", a.status, a.body)
	}
	for range 3 {
		if a := read(counted.ID); a.status != 200 {
			t.Errorf("read once space returned: %d %s", a.status, a.body)
		}
	}

	// Nothing lost, with and without a restart.
	check := func(p *proc, when string) {
		t.Helper()
		for id, doc := range docs {
			if a := get(t, p.url+"/admin/v1/mocks/"+id+"/data", auth...); a.status != 200 || a.body != doc {
				t.Errorf("%s: mock %s: %d, %d bytes (want %d)", when, id, a.status, len(a.body), len(doc))
			}
		}
		for _, id := range []string{gone.ID, tiny.ID} {
			if a := get(t, p.url+"/admin/v1/mocks/"+id, auth...); a.status != 404 {
				t.Errorf("%s: deleted mock: %d", when, a.status)
			}
		}
		a := get(t, p.url+"/admin/v1/mocks/"+counted.ID+"/usage", auth...)
		if want := fmt.Sprintf(`"used":%d,"limit":100000`, served); !strings.Contains(a.body, want) {
			t.Errorf("%s: usage %s, want %s (every read served counted, no other)", when, a.body, want)
		}
		if a := get(t, p.url+"/readyz"); a.status != 200 {
			t.Errorf("%s: /readyz %d %s", when, a.status, a.body)
		}
		var h decoy.UsageHistory
		a = get(t, p.url+"/admin/v1/mocks/"+counted.ID+"/usage/history", auth...)
		if err := json.Unmarshal([]byte(a.body), &h); err != nil {
			t.Fatalf("%s: usage history %d %s: %v", when, a.status, a.body, err)
		}
		n := int64(0)
		for _, b := range h.Minutes {
			n += b.Served
		}
		if n != int64(served) {
			t.Errorf("%s: the usage history has %d reads served, want %d", when, n, served)
		}
	}
	check(p, "once space returned")
	if strings.Contains(p.stderr.String(), "status=500") {
		t.Errorf("a request answered 500:\n%s", p.stderr)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	check(start(t, dir, args...), "after a restart")
}
