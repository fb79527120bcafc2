package main_test

// A bounded soak test: concurrent clients mix filtered reads of a large
// document, admin data updates, privacy toggles, token rotations and reads
// of private mocks with the token each client last knew, for -soak (20 s by
// default; longer by hand: go test ./cmd/decoy -run TestSoak -soak=10m).
// No answer may be a 5xx, no old token may work once its replacement was
// acknowledged, every JSON answer must parse, and the server's memory must
// level off.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
)

var soakFor = flag.Duration("soak", 20*time.Second, "how long each sub-test of TestSoak runs")

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test skipped with -short")
	}
	// Limits off, so that they do not get in the way; a mock of its own has
	// a rate limit, to exercise 429s. Stale tokens are sent on purpose, so
	// failed attempts are not limited either.
	flags := []string{"--rate-limit", "0", "--monthly-quota", "0", "--auth-failure-limit", "0"}
	t.Run("sqlite", func(t *testing.T) {
		p := start(t, t.TempDir(), append([]string{"--admin-token", adminToken}, flags...)...)
		newSoak(t, []*proc{p}).run(*soakFor)
	})
	t.Run("replicas", func(t *testing.T) {
		db := postgresURL(t)
		rd, prefix := redisURL(t)
		newSoak(t, startReplicas(t, 2, db, rd, prefix, flags...)).run(*soakFor)
	})
}

const (
	bigRecords   = 2000
	dataRecords  = 20
	privateMocks = 3
	dataMocks    = 2
	// crossReplicaDelay is how long the contract gives a change to reach
	// the other replicas.
	crossReplicaDelay = time.Second
)

// soak is one soak run against one decoy or several replicas of one.
type soak struct {
	t    *testing.T
	ps   []*proc
	hc   *http.Client
	stop atomic.Bool

	bigID     string
	privates  []*mockHistory[tokenState]
	privateID []string
	datas     []*mockHistory[int64]
	dataID    []string
	limitedID string

	mu       sync.Mutex
	statuses map[int]int64
	failures []string
	failed   int
	// gracedLate is the longest a read was sent after the acknowledgement
	// of a change on another replica and still saw the state before it;
	// gracedWhat describes that read.
	gracedLate time.Duration
	gracedWhat string
	// latencies is a uniform sample of the times public reads took.
	latencies []time.Duration
	reads     int
	slowest   string
	slowestAt time.Duration

	total                    atomic.Int64
	rotations, toggles       atomic.Int64
	dataWrites, bigWrites    atomic.Int64
	private200, private401   atomic.Int64
	gracedTokens, gracedData atomic.Int64
	bigReads, invalidQueries atomic.Int64
}

func newSoak(t *testing.T, ps []*proc) *soak {
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	s := &soak{t: t, ps: ps, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, statuses: map[int]int64{}}
	p := ps[0]
	s.bigID = createMock(t, p, string(bigDoc(0)), client.CreateOptions{Name: "big"}).ID
	for i := range privateMocks {
		m := createMock(t, p, string(dataMockDoc(int64(i))), client.CreateOptions{Private: true})
		s.privateID = append(s.privateID, m.ID)
		s.privates = append(s.privates, newMockHistory(tokenState{private: true, token: m.Token}))
	}
	for range dataMocks {
		s.dataID = append(s.dataID, createMock(t, p, string(dataMockDoc(0)), client.CreateOptions{}).ID)
		s.datas = append(s.datas, newMockHistory[int64](0))
	}
	s.limitedID = createMock(t, p, `[{"limited":true}]`, client.CreateOptions{RateLimit: i64(5)}).ID
	return s
}

// fail records a failed expectation; the first few are reported in full.
func (s *soak) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed++
	if len(s.failures) < 20 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
}

// soakAnswer is an answer, with when its request was sent and when it was
// fully read.
type soakAnswer struct {
	status     int
	header     http.Header
	body       []byte
	sent, done time.Time
}

// send sends a request to replica r and reads the answer. Transport errors,
// 5xx answers and 200 JSON answers that do not parse are failures. The
// header list holds name, value pairs.
func (s *soak) send(r int, method, path string, body []byte, header ...string) (soakAnswer, bool) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.ps[r].url+path, rd)
	if err != nil {
		s.fail("%s %s: %v", method, path, err)
		return soakAnswer{}, false
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if strings.HasPrefix(path, "/admin/") {
		req.Header.Set("Authorization", "Bearer "+adminToken)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	a := soakAnswer{sent: time.Now()}
	resp, err := s.hc.Do(req)
	if err != nil {
		s.fail("%s %s on replica %d: %v", method, path, r, err)
		return a, false
	}
	a.body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	a.done, a.status, a.header = time.Now(), resp.StatusCode, resp.Header
	if err != nil {
		s.fail("%s %s on replica %d: reading the answer: %v", method, path, r, err)
		return a, false
	}
	s.total.Add(1)
	s.mu.Lock()
	s.statuses[a.status]++
	if d := a.done.Sub(a.sent); strings.HasPrefix(path, "/mock/") {
		s.sampleLatency(d)
		if d > s.slowestAt {
			s.slowestAt = d
			s.slowest = fmt.Sprintf("%s %s on replica %d, sent at %s: %d", method, path, r, a.sent.Format("15:04:05.000"), a.status)
		}
	}
	s.mu.Unlock()
	if a.status >= 500 {
		s.fail("%s %s on replica %d: %d %.200s", method, path, r, a.status, a.body)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); a.status == http.StatusOK && mt == "application/json" && !json.Valid(a.body) {
		s.fail("%s %s on replica %d: 200 with a body that is not JSON: %.200s", method, path, r, a.body)
	}
	return a, true
}

// sampleLatency keeps d in a uniform sample of at most maxLatencies read
// times (reservoir sampling). s.mu is held.
func (s *soak) sampleLatency(d time.Duration) {
	const maxLatencies = 100_000
	s.reads++
	if len(s.latencies) < maxLatencies {
		s.latencies = append(s.latencies, d)
	} else if k := rand.IntN(s.reads); k < maxLatencies {
		s.latencies[k] = d
	}
}

func (s *soak) replica() int { return rand.IntN(len(s.ps)) }

// run runs the clients for d and checks what they saw.
func (s *soak) run(d time.Duration) {
	t := s.t
	var wg sync.WaitGroup
	loop := func(n int, f func(worker int)) {
		for w := range n {
			wg.Go(func() {
				for !s.stop.Load() {
					f(w)
				}
			})
		}
	}
	loop(4, func(int) { s.readBig() })
	known := make([][]string, 3)
	loop(len(known), func(w int) {
		if known[w] == nil {
			known[w] = make([]string, privateMocks)
		}
		s.readPrivate(known[w])
	})
	loop(2, func(int) { s.readData() })
	for i := range privateMocks {
		wg.Go(func() {
			for !s.stop.Load() && s.changeToken(i) {
				time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for !s.stop.Load() && s.writeData() {
			time.Sleep(20 * time.Millisecond)
		}
	})
	loop(1, func(int) { s.writeBig(); time.Sleep(time.Second) })
	loop(1, func(int) { s.readLimited(); time.Sleep(20 * time.Millisecond) })
	loop(1, func(int) { s.pollAdmin(); time.Sleep(200 * time.Millisecond) })

	rss := make([][]rssSample, len(s.ps))
	began := time.Now()
	sample := func() {
		for i, p := range s.ps {
			if kib, err := vmRSS(p.cmd.Process.Pid); err != nil {
				t.Errorf("RSS of replica %d: %v", i, err)
			} else {
				rss[i] = append(rss[i], rssSample{time.Since(began), kib})
			}
		}
	}
	sample()
	tick := time.NewTicker(time.Second)
	for time.Since(began) < d {
		<-tick.C
		sample()
	}
	tick.Stop()
	s.stop.Store(true)
	wg.Wait()
	elapsed := time.Since(began)
	sample()

	s.report(elapsed)
	for i, series := range rss {
		s.checkRSS(i, series, d/4)
	}
}

func (s *soak) report(elapsed time.Duration) {
	t := s.t
	s.mu.Lock()
	defer s.mu.Unlock()
	var codes []int
	for c := range s.statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", s.statuses[c], c))
	}
	total := s.total.Load()
	t.Logf("%d requests in %v (%.0f/s) over %d replica(s): %s", total, elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds(), len(s.ps), strings.Join(parts, ", "))
	t.Logf("big document: %d reads (%d with an invalid query), %d rewrites; data mocks: %d writes; private mocks: %d rotations, %d privacy toggles, reads answered %d×200 and %d×401",
		s.bigReads.Load(), s.invalidQueries.Load(), s.bigWrites.Load(), s.dataWrites.Load(),
		s.rotations.Load(), s.toggles.Load(), s.private200.Load(), s.private401.Load())
	if n := len(s.latencies); n > 0 {
		slices.Sort(s.latencies)
		q := func(f float64) time.Duration { return s.latencies[int(f*float64(n-1))].Round(10 * time.Microsecond) }
		t.Logf("public read times: p50 %v, p90 %v, p99 %v, max %v (%s)", q(0.5), q(0.9), q(0.99), s.slowestAt.Round(10*time.Microsecond), s.slowest)
	}
	if len(s.ps) > 1 {
		t.Logf("reads on the other replica that saw a change's previous state, sent within %v of its acknowledgement: %d with a token (old token let in, or new one refused), %d of data; the latest, sent %v after:\n%s",
			crossReplicaDelay, s.gracedTokens.Load(), s.gracedData.Load(), s.gracedLate.Round(time.Microsecond), s.gracedWhat)
	}
	if s.statuses[http.StatusTooManyRequests] == 0 {
		t.Error("the rate-limited mock never answered 429")
	}
	for _, f := range s.failures {
		t.Error(f)
	}
	if s.failed > len(s.failures) {
		t.Errorf("... and %d more failures", s.failed-len(s.failures))
	}
}

// tokenState is what decides whether a token opens a mock.
type tokenState struct {
	private bool
	token   string // "" while a new one is being issued
}

func (st tokenState) admits(token string) bool { return !st.private || st.token == token }

// mockChange is one change of a mock's state by an admin call.
type mockChange[S any] struct {
	sent, acked time.Time // acked is zero while the call is in flight
	replica     int
	state       S // the state the change leads to
}

// mockHistory is the sequence of changes of one mock, made one at a time, that
// reads are judged against.
type mockHistory[S any] struct {
	mu      sync.Mutex
	changes []mockChange[S]
}

func newMockHistory[S any](initial S) *mockHistory[S] {
	now := time.Now()
	return &mockHistory[S]{changes: []mockChange[S]{{sent: now, acked: now, state: initial}}}
}

// begin records a change about to be sent to replica r.
func (h *mockHistory[S]) begin(r int, st S) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes = append(h.changes, mockChange[S]{sent: time.Now(), replica: r, state: st})
}

// ack records that the change in flight was acknowledged at, and completes
// its state with what the answer said.
func (h *mockHistory[S]) ack(at time.Time, complete func(*S)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &h.changes[len(h.changes)-1]
	c.acked = at
	if complete != nil {
		complete(&c.state)
	}
	// A state replaced long ago can no longer be seen by any read.
	for len(h.changes) > 2 && !h.changes[1].acked.IsZero() && time.Since(h.changes[1].acked) > time.Minute {
		h.changes = h.changes[1:]
	}
}

// latest returns the state of the last acknowledged change.
func (h *mockHistory[S]) latest() S {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.changes) - 1; ; i-- {
		if !h.changes[i].acked.IsZero() {
			return h.changes[i].state
		}
	}
}

// judge reports whether a read sent to replica r may have seen a state for
// which ok holds: strictly (a state not replaced before the read was sent),
// or only thanks to the time the other replicas have to see a change (late:
// how long after the acknowledgement of the change that replaced the
// latest such state the read was sent).
func (h *mockHistory[S]) judge(r int, a soakAnswer, grace time.Duration, ok func(S) bool) (strict, graced bool, late time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, c := range h.changes {
		if c.sent.After(a.done) {
			break // sent after the answer came: not seen
		}
		if !ok(c.state) {
			continue
		}
		if k+1 == len(h.changes) {
			return true, false, 0
		}
		next := h.changes[k+1]
		switch {
		case next.acked.IsZero() || !next.acked.Before(a.sent):
			return true, false, 0
		case next.replica != r && a.sent.Sub(next.acked) <= grace:
			if d := a.sent.Sub(next.acked); !graced || d < late {
				graced, late = true, d
			}
		}
	}
	return false, graced, late
}

// describe shows the changes around a read, times relative to its sending.
func (h *mockHistory[S]) describe(a soakAnswer, show func(S) string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "read answered %v after it was sent; changes:", a.done.Sub(a.sent))
	from := max(0, len(h.changes)-6)
	for _, c := range h.changes[from:] {
		acked := "in flight"
		if !c.acked.IsZero() {
			acked = "acknowledged at " + c.acked.Sub(a.sent).String()
		}
		fmt.Fprintf(&b, "\n  via replica %d, sent at %v, %s: %s", c.replica, c.sent.Sub(a.sent), acked, show(c.state))
	}
	return b.String()
}

func (s *soak) grace() time.Duration {
	if len(s.ps) > 1 {
		return crossReplicaDelay
	}
	return 0
}

// graced counts in n a read that saw a change's previous state on another
// replica, late after the change was acknowledged; what describes it.
func (s *soak) graced(n *atomic.Int64, late time.Duration, what func() string) {
	n.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if late > s.gracedLate {
		s.gracedLate, s.gracedWhat = late, what()
	}
}

func showToken(st tokenState) string {
	if !st.private {
		return "open"
	}
	return "private, token …" + st.token[max(0, len(st.token)-6):]
}

// changeToken rotates the token of private mock i, or turns its privacy
// off or on, through a random replica. It returns false when it cannot go
// on.
func (s *soak) changeToken(i int) bool {
	h, id, r := s.privates[i], s.privateID[i], s.replica()
	cur := h.latest()
	method, path, body := http.MethodPost, "/admin/v1/mocks/"+id+"/token", []byte(nil)
	next := tokenState{private: true}
	switch {
	case !cur.private:
		method, path, body = http.MethodPatch, "/admin/v1/mocks/"+id, []byte(`{"private":true}`)
	case rand.IntN(4) == 0:
		method, path, body = http.MethodPatch, "/admin/v1/mocks/"+id, []byte(`{"private":false}`)
		next.private = false
	}
	h.begin(r, next)
	a, ok := s.send(r, method, path, body)
	var m client.Mock
	if !ok || a.status != http.StatusOK || json.Unmarshal(a.body, &m) != nil || m.Private != next.private || (next.private && m.Token == "") {
		// The change stays in flight: the state is unknown from now on.
		s.fail("%s %s: %d %.200s", method, path, a.status, a.body)
		return false
	}
	h.ack(a.done, func(st *tokenState) { st.token = m.Token })
	if method == http.MethodPost {
		s.rotations.Add(1)
	} else {
		s.toggles.Add(1)
	}
	return true
}

// readPrivate reads a private mock with the token this client last knew
// (known, by mock), which it learns again now and then only, so that many
// reads carry a token replaced meanwhile.
func (s *soak) readPrivate(known []string) {
	i, r := rand.IntN(privateMocks), s.replica()
	h := s.privates[i]
	if known[i] == "" || rand.IntN(4) == 0 {
		if st := h.latest(); st.private {
			known[i] = st.token
		}
	}
	token := known[i]
	if token == "" { // the mock was open whenever this client looked
		token = "dcy_never_issued"
	}
	path := "/mock/" + s.privateID[i]
	var a soakAnswer
	var ok bool
	if rand.IntN(4) == 0 {
		a, ok = s.send(r, http.MethodGet, path+"?limit=3&auth_token="+url.QueryEscape(token), nil)
	} else {
		a, ok = s.send(r, http.MethodGet, path, nil, "serviceauthtoken", token)
	}
	if !ok {
		return
	}
	var admits func(tokenState) bool
	switch a.status {
	case http.StatusOK:
		s.private200.Add(1)
		admits = func(st tokenState) bool { return st.admits(token) }
	case http.StatusUnauthorized:
		s.private401.Add(1)
		admits = func(st tokenState) bool { return !st.admits(token) }
	default:
		s.fail("read of private mock %d with a token: %d %.200s", i, a.status, a.body)
		return
	}
	strict, graced, late := h.judge(r, a, s.grace(), admits)
	switch {
	case strict:
	case graced:
		s.graced(&s.gracedTokens, late, func() string {
			return fmt.Sprintf("%d on replica %d with token …%s of private mock %d; %s", a.status, r, token[len(token)-6:], i, h.describe(a, showToken))
		})
	case a.status == http.StatusOK:
		s.fail("private mock %d on replica %d answered 200 with token …%s after its replacement was acknowledged\n%s",
			i, r, token[len(token)-6:], h.describe(a, showToken))
	default:
		s.fail("private mock %d on replica %d answered 401 with token …%s, valid since before the read\n%s",
			i, r, token[len(token)-6:], h.describe(a, showToken))
	}
}

// writeData replaces the data of a data mock with its next version. It
// returns false when it cannot go on.
func (s *soak) writeData() bool {
	i, r := rand.IntN(dataMocks), s.replica()
	h := s.datas[i]
	v := h.latest() + 1
	h.begin(r, v)
	a, ok := s.send(r, http.MethodPut, "/admin/v1/mocks/"+s.dataID[i]+"/data", dataMockDoc(v))
	if !ok || a.status != http.StatusOK {
		// The change stays in flight: the version is unknown from now on.
		s.fail("PUT data of data mock %d: %d %.200s", i, a.status, a.body)
		return false
	}
	h.ack(a.done, nil)
	s.dataWrites.Add(1)
	return true
}

// readData reads a data mock and checks that it holds one whole version,
// not older than the last acknowledged before the read.
func (s *soak) readData() {
	i, r := rand.IntN(dataMocks), s.replica()
	query, want := "", dataRecords
	if rand.IntN(2) == 0 {
		query, want = "?filters=i%3D7", 1
	}
	a, ok := s.send(r, http.MethodGet, "/mock/"+s.dataID[i]+query, nil)
	if !ok {
		return
	}
	var recs []struct{ Version int64 }
	if a.status != http.StatusOK || json.Unmarshal(a.body, &recs) != nil || len(recs) != want {
		s.fail("read of data mock %d%s: %d %.200s", i, query, a.status, a.body)
		return
	}
	for _, rec := range recs[1:] {
		if rec.Version != recs[0].Version {
			s.fail("read of data mock %d mixes versions %d and %d", i, recs[0].Version, rec.Version)
			return
		}
	}
	got := recs[0].Version
	strict, graced, late := s.datas[i].judge(r, a, s.grace(), func(v int64) bool { return v == got })
	switch {
	case strict:
	case graced:
		s.graced(&s.gracedData, late, func() string {
			return fmt.Sprintf("version %d of data mock %d on replica %d; %s", got, i, r,
				s.datas[i].describe(a, func(v int64) string { return "version " + strconv.FormatInt(v, 10) }))
		})
	default:
		s.fail("data mock %d on replica %d answered version %d\n%s", i, r, got,
			s.datas[i].describe(a, func(v int64) string { return "version " + strconv.FormatInt(v, 10) }))
	}
}

// dataMockDoc is version v of a data mock.
func dataMockDoc(v int64) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range dataRecords {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"i":%d,"version":%d,"text":"record %d of version %d"}`, i, v, i, v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

var (
	bigCities = []string{"Paris", "Lyon", "Berlin", "Madrid", "Rome", "Oslo", "Lisbon"}
	bigColors = []string{"red", "green", "blue", "black", "white"}
)

// bigDoc is the large document, generation gen: only the gen field differs
// from one generation to the next, so queries give the same records.
func bigDoc(gen int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range bigRecords {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"user-%04d","age":%d,"active":%t,"score":%d.%d,"address":{"city":%q,"zip":"%05d"},"tags":[%q,%q],"gen":%d}`,
			i, (i*7919)%bigRecords, 18+i%60, i%3 != 0, i%1000/10, i%10, bigCities[i%7], i*37%100000,
			bigColors[i%5], bigColors[i/5%5], gen)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// bigQueries are filters on the large document, with which records match.
var bigQueries = []struct {
	filters string
	match   func(i int) bool
}{
	{"", func(int) bool { return true }},
	{"address.city=Paris", func(i int) bool { return i%7 == 0 }},
	{"address.city[$eqi]=paris", func(i int) bool { return i%7 == 0 }},
	{"active=true&age[$ne]=30", func(i int) bool { return i%3 != 0 && 18+i%60 != 30 }},
	{"tags=blue", func(i int) bool { return i%5 == 2 || i/5%5 == 2 }},
	{"address.city[$nei]=LYON&active=false", func(i int) bool { return i%7 != 1 && i%3 == 0 }},
}

// readBig runs a random query on the large document and checks its answer
// against the generated records.
func (s *soak) readBig() {
	r := s.replica()
	if rand.IntN(20) == 0 {
		s.invalidQueries.Add(1)
		a, ok := s.send(r, http.MethodGet, "/mock/"+s.bigID+"?filters="+url.QueryEscape("age[$gt]=3"), nil)
		if ok && (a.status != http.StatusBadRequest || string(a.body) != `{"error":"Unsupported operator: $gt"}`+"\n") {
			s.fail("invalid query: %d %.200s", a.status, a.body)
		}
		return
	}
	s.bigReads.Add(1)
	q := bigQueries[rand.IntN(len(bigQueries))]
	orderBy := []string{"", "age", "score", "name"}[rand.IntN(4)]
	desc := rand.IntN(2) == 0
	limit, offset := rand.IntN(60), rand.IntN(100)
	v := url.Values{}
	if q.filters != "" {
		v.Set("filters", q.filters)
	}
	if orderBy != "" {
		v.Set("order_by", orderBy)
		if desc {
			v.Set("order_direction", "desc")
		}
	}
	v.Set("limit", strconv.Itoa(limit))
	v.Set("offset", strconv.Itoa(offset))
	path := "/mock/" + s.bigID + "?" + v.Encode()
	a, ok := s.send(r, http.MethodGet, path, nil)
	if !ok {
		return
	}
	total := 0
	for i := range bigRecords {
		if q.match(i) {
			total++
		}
	}
	var recs []struct {
		ID    int
		Age   int
		Score float64
		Name  string
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &recs) != nil {
		s.fail("GET %s: %d %.200s", path, a.status, a.body)
		return
	}
	if got := a.header.Get("X-Total-Count"); got != strconv.Itoa(total) || len(recs) != min(limit, max(total-offset, 0)) {
		s.fail("GET %s: X-Total-Count %s and %d records, want %d and %d", path, got, len(recs), total, min(limit, max(total-offset, 0)))
		return
	}
	for k, rec := range recs {
		if rec.ID < 0 || rec.ID >= bigRecords || !q.match(rec.ID) {
			s.fail("GET %s: record %d does not match", path, rec.ID)
			return
		}
		if k == 0 || orderBy == "" {
			continue
		}
		prev := recs[k-1]
		c := map[string]int{
			"age":   cmp.Compare(prev.Age, rec.Age),
			"score": cmp.Compare(prev.Score, rec.Score),
			"name":  strings.Compare(prev.Name, rec.Name),
		}[orderBy]
		// Stable in both directions: equal keys keep the document's order.
		if (desc && c < 0) || (!desc && c > 0) || (c == 0 && prev.ID > rec.ID) {
			s.fail("GET %s: records %d and %d out of order", path, prev.ID, rec.ID)
			return
		}
	}
}

// writeBig replaces the large document with its next generation.
func (s *soak) writeBig() {
	n := int(s.bigWrites.Add(1))
	a, ok := s.send(s.replica(), http.MethodPut, "/admin/v1/mocks/"+s.bigID+"/data", bigDoc(n))
	if ok && a.status != http.StatusOK {
		s.fail("PUT the large document: %d %.200s", a.status, a.body)
	}
}

// readLimited reads the mock limited to 5 requests a minute.
func (s *soak) readLimited() {
	a, ok := s.send(s.replica(), http.MethodGet, "/mock/"+s.limitedID, nil)
	if ok && a.status != http.StatusOK && a.status != http.StatusTooManyRequests {
		s.fail("read of the limited mock: %d %.200s", a.status, a.body)
	}
}

// pollAdmin reads what an operator's dashboard would.
func (s *soak) pollAdmin() {
	for _, path := range []string{"/admin/v1/mocks/" + s.limitedID + "/usage", "/admin/v1/mocks?limit=5", "/admin/v1/mocks/" + s.privateID[0]} {
		if a, ok := s.send(s.replica(), http.MethodGet, path, nil); ok && a.status != http.StatusOK {
			s.fail("GET %s: %d %.200s", path, a.status, a.body)
		}
	}
}

type rssSample struct {
	at  time.Duration
	kib int64
}

// vmRSS returns the resident set size of a process, in KiB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// checkRSS logs a replica's RSS series and fails when the last sample is
// above twice the one taken after warmup, plus 20 MiB: a leak detector.
func (s *soak) checkRSS(replica int, series []rssSample, warmup time.Duration) {
	if len(series) == 0 {
		return
	}
	warm := series[len(series)-1]
	for _, x := range series {
		if x.at >= warmup {
			warm = x
			break
		}
	}
	lo, hi := series[0], series[0]
	for _, x := range series {
		if x.kib < lo.kib {
			lo = x
		}
		if x.kib > hi.kib {
			hi = x
		}
	}
	last := series[len(series)-1]
	mib := func(x rssSample) string {
		return fmt.Sprintf("%.1f MiB at %v", float64(x.kib)/1024, x.at.Round(time.Second))
	}
	s.t.Logf("RSS of replica %d (%d samples): min %s, after warmup %s, max %s, last %s",
		replica, len(series), mib(lo), mib(warm), mib(hi), mib(last))
	var all strings.Builder
	for _, x := range series {
		fmt.Fprintf(&all, " %.1f", float64(x.kib)/1024)
	}
	s.t.Logf("RSS of replica %d, MiB, every second:%s", replica, all.String())
	if limit := 2*warm.kib + 20<<10; last.kib > limit {
		s.t.Errorf("RSS of replica %d grew from %s after warmup to %s, above %.1f MiB: a leak?", replica, mib(warm), mib(last), float64(limit)/1024)
	}
}
