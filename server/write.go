package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mergepatch"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
	"github.com/google/uuid"
)

// Writes (§12 of the contract): a route whose action is create, replace,
// update or delete changes the records of its mock's collection. A write
// passes the checks a read does (token, rate limit, rules), then:
//
//  1. its body is read and checked (one JSON object, within
//     --max-data-bytes, valid against the route's request schema);
//  2. it is planned over the live data this replica holds: the record it
//     finds, the id it assigns, the record it stores (planWrite);
//  3. the quota counts it as served;
//  4. it is committed: appended to the mock's log of writes in the store
//     as the write after the live data it was planned over. When another
//     writer came first (on any replica), this replica catches up with the
//     store and plans again. Writes to one mock on one replica take turns,
//     so that they do not race each other to the store;
//  5. the cache's entry takes it (Entry.Apply), other replicas are told,
//     and the record is answered.
//
// Its cost is the record's: the store appends one row, the cache applies
// one change. Now and then the log is compacted into a new base, in the
// background (maybeCompact).

// writeState is what the stages of a write share.
type writeState struct {
	action string
	b      *mockcache.Binding
	body   []byte // the request's JSON object (nil for delete)
}

// planned is a write worked out over the live data: the change to commit,
// and its answer.
type planned struct {
	w        decoy.Write
	status   int
	record   []byte // answered; nil for delete
	location string // the new record's path, for create
}

// writeRecords answers a request to a route that writes, from the quota
// step on (the rules were tried and none answered).
func (s *Server) writeRecords(w http.ResponseWriter, r *http.Request, rd *readState) error {
	t := &rd.t
	if s.live == nil {
		return errWriteNotServed(t.write)
	}
	if t.e.Mock.TemplateMode == decoy.TemplateAlways {
		// Every read answers data generated then: a write would be
		// acknowledged and never seen.
		return errWriteGenerated
	}
	ctx := r.Context()
	if s.logBehind(t.e) {
		// Said before the body is read: its bytes would be read in vain.
		s.undoRate(ctx, t.e.Mock.ID, rd.rate)
		return errLogBehind
	}
	ws, err := s.newWriteState(r, t)
	if err != nil {
		if forLoad(r, err) { // all bodies held at once, not the client's own
			s.undoRate(ctx, t.e.Mock.ID, rd.rate)
		}
		return err
	}
	reserved, err := s.reserve(ctx, w.Header(), t.e.Mock, rd.rate, rd.quotaLimit, rd.month, rd.now, true)
	if err != nil {
		return err
	}
	p, err := s.commitWrite(ctx, r, t, &ws)
	if err != nil {
		s.release(ctx, reserved)
		if forLoad(r, err) { // writers contending, a store down, all bodies held
			s.undoRate(ctx, t.e.Mock.ID, rd.rate)
		}
		return err
	}
	if delay := t.e.Mock.DelayMS; delay > 0 {
		s.wait(ctx, time.Duration(delay)*time.Millisecond, reservation{})
	}
	s.cfg.Usage.Served(t.e.Mock.ID, rd.now)
	h := w.Header()
	if p.location != "" {
		h["Location"] = one(p.location)
	}
	if p.record == nil {
		w.WriteHeader(p.status)
		return nil
	}
	h["Content-Type"] = valJSON
	h["Content-Length"] = one(strconv.Itoa(len(p.record)))
	w.WriteHeader(p.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(p.record)
	}
	return nil
}

// Errors of §12.1.
var (
	errBodyNotObject  = answer.New(http.StatusBadRequest, "Body must be a JSON object")
	errNotCollection  = answer.New(http.StatusConflict, "Data is not a collection")
	errRecordExists   = answer.New(http.StatusConflict, "Record exists")
	errIDMismatch     = answer.New(http.StatusBadRequest, "Id does not match the path")
	errWritesContend  = answer.New(http.StatusServiceUnavailable, "Too many writes to this mock at once; try again", "Retry-After", "1")
	errNestedIDAbsent = answer.New(http.StatusBadRequest, "Body lacks the records' id field")
	errIDNotScalar    = answer.New(http.StatusBadRequest, "Id must be a single value, not an array or object")
	errWriteGenerated = answer.New(http.StatusConflict, "This mock's data is generated on every read: it takes no writes")
)

// newWriteState is the write t's route asks of r: its action and, but
// for a delete, its body, read (writeBody) and checked against the
// route's schema.
func (s *Server) newWriteState(r *http.Request, t *target) (writeState, error) {
	ws := writeState{action: t.write, b: t.binding}
	if ws.action == decoy.WriteDelete {
		return ws, nil
	}
	body, err := s.writeBody(r)
	if err == nil && ws.b.Schema != nil {
		err = ws.b.Schema.Check(body)
	}
	ws.body = body
	return ws, err
}

// writeBody reads a write's body: one JSON object, at most
// --max-data-bytes (413 past it), without the white space around it.
func (s *Server) writeBody(r *http.Request) ([]byte, error) {
	limit := s.bodyLimit()
	if r.Body == nil {
		return nil, errBodyNotObject
	}
	tooLarge := answer.New(http.StatusRequestEntityTooLarge, "Body larger than "+strconv.FormatInt(limit, 10)+" bytes (--max-data-bytes)")
	if r.ContentLength > limit {
		return nil, tooLarge // said up front: not read
	}
	var b []byte
	if kb, ok := r.Body.(*keptBody); ok && kb.over {
		return nil, tooLarge // the rules read past the bound: not read again
	} else if ok && kb.whole != nil {
		b = kb.whole // the rules read it whole: not read, nor copied, again
	} else {
		var err error
		if b, err = readBody(r, limit); err == errBodiesBusy {
			return nil, err
		} else if err != nil {
			if tooSlow(r) != nil {
				return nil, tooSlow(r)
			}
			return nil, answer.New(http.StatusBadRequest, "The body could not be read")
		}
	}
	if int64(len(b)) > limit {
		return nil, tooLarge
	}
	if !utf8.Valid(b) {
		// Said where, in the body as sent (json.Valid lets it through).
		return nil, decoy.NotUTF8(b)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil, errBodyNotObject
	}
	return b, nil
}

// maxWriteAttempts bounds how many times a write is planned again after
// other replicas' writes came first.
const maxWriteAttempts = 32

// commitWrite plans the write over the newest live data this replica
// holds, and commits it: see the steps above. It takes its turn among the
// writes to the mock on this replica.
func (s *Server) commitWrite(ctx context.Context, r *http.Request, t *target, ws *writeState) (*planned, error) {
	id := t.e.Mock.ID
	mu := s.writeLock(id)
	mu.Lock()
	defer mu.Unlock()
	// The entry may have moved on while the request waited for its turn.
	e, err := s.cache.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	defer func() {
		if e != nil {
			e.Release()
		}
	}()
	if s.logBehind(e) {
		return nil, errLogBehind
	}
	var copied int64 // bytes of a planned record counted against the bodies' bound
	for attempt := 0; ; attempt++ {
		p, err := planWrite(e, t, ws)
		if err != nil {
			return nil, err
		}
		if n := recordCopy(p, ws); n > copied {
			// A record made anew (a merge, an id added) is one more copy
			// of about the body's size, or the record's: counted as the
			// body is, so that a small PATCH of a large record is too.
			if !holdMore(r, n-copied) {
				return nil, holdRefusal(r)
			}
			copied = n
		}
		p.w.Seq = e.LiveSeq() + 1
		p.w.At = s.cfg.Now().UTC()
		// Applied before it is stored: a write that does not apply never
		// reaches the log, and the live data's size is known exactly.
		ne, err := e.ApplyPlanned(&p.w)
		if err != nil {
			return nil, err
		}
		size := ne.Size()
		if limit := cmp.Or(s.docBound, s.bodyLimit()); size > limit && size > e.Size() {
			// A document grows through its routes no more than an
			// upload may make it (a walkthrough grew one to three times
			// the bound; its export could then not be imported). One
			// that does not grow passes, as max_bytes lets it.
			ne.Abandon(e)
			return nil, answer.New(http.StatusRequestEntityTooLarge, "The mock's data would be larger than "+strconv.FormatInt(limit, 10)+" bytes (--max-data-bytes)")
		}
		err = s.live.AppendWrite(ctx, id, &p.w, size)
		if err != nil {
			// Not committed (the client left, the store refused it): its
			// record's room goes back, so that the next write to e does
			// not copy the whole data.
			ne.Abandon(e)
		}
		if decoy.ErrorCode(err) == decoy.ECONFLICT {
			if attempt+1 >= maxWriteAttempts {
				return nil, errWritesContend
			}
			// CatchUp takes over the reference to e.
			ne, cerr := s.cache.CatchUp(ctx, e)
			e = ne
			if cerr != nil {
				return nil, cerr
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		// Acknowledged by the store: the cache takes the new live data.
		s.cache.PutLive(ne)
		ne.Release()
		s.announceWrite(ctx, id, p.w.Seq)
		s.maybeCompact(id, p.w.Seq, size, ne.LogBytes())
		p.location = s.locationOf(r, t, p)
		return p, nil
	}
}

// planWrite works out the write ws asks for over the live data of e.
func planWrite(e *mockcache.Entry, t *target, ws *writeState) (*planned, error) {
	coll, ok := e.Records(t.scope.Items)
	if !ok || !coll.Objects() {
		return nil, errNotCollection
	}
	b := ws.b
	p := &planned{w: decoy.Write{Op: ws.action, Items: strings.Join(t.scope.Items, "."), Field: strings.Join(b.ID, ".")}}
	if ws.action == decoy.WriteCreate {
		key, has := memberText(ws.body, b.ID)
		record := ws.body
		if has {
			if !scalar(key) {
				return nil, errIDNotScalar
			}
			if _, found := query.FindRecord(coll, b.ID, key); found {
				return nil, errRecordExists
			}
		} else {
			if len(b.ID) != 1 {
				return nil, errNestedIDAbsent
			}
			key = newID(coll, b.ID)
			record = withID(ws.body, b.ID[0], key)
		}
		p.w.Key, p.w.Record = string(key), record
		p.status, p.record = http.StatusCreated, record
		return p, nil
	}

	// An item route: the record its path names, as a read finds it.
	i, ok := firstHolding(coll, t.scope.Conditions)
	if !ok {
		return nil, errRecordNotFound
	}
	old := coll.Record(i)
	key, has := memberText(old, b.ID)
	if !has {
		// A record without an id cannot be named by the log.
		return nil, answer.New(http.StatusConflict, "The record has no "+strings.Join(b.ID, ".")+" field, which a write names it by: it cannot be written")
	}
	if !scalar(key) {
		// Found by one of its elements (§1.3's equality), as a read finds
		// it; but the log names a record by its id's value, which must be
		// one JSON scalar.
		return nil, answer.New(http.StatusConflict, "The record's "+strings.Join(b.ID, ".")+" field, which a write names it by, is not a single value: it cannot be written")
	}
	p.w.Key = string(key)
	last := t.scope.Conditions[len(t.scope.Conditions)-1:]
	switch ws.action {
	case decoy.WriteDelete:
		p.status = http.StatusNoContent
		return p, nil
	case decoy.WriteReplace:
		record := ws.body
		if got, has := memberText(record, b.ID); has {
			if !scalar(got) {
				return nil, errIDNotScalar
			}
			if !holdsFor(record, last) {
				return nil, errIDMismatch
			}
		} else {
			if len(b.ID) != 1 {
				return nil, errNestedIDAbsent
			}
			record = withID(record, b.ID[0], key)
		}
		p.w.Record = record
	case decoy.WriteUpdate:
		record, err := mergepatch.Apply(old, ws.body)
		if err != nil {
			return nil, answer.New(http.StatusBadRequest, "Body must be a JSON object")
		}
		got, has := memberText(record, b.ID)
		if has && !scalar(got) {
			return nil, errIDNotScalar
		}
		if !has || !bytes.Equal(got, key) && !holdsFor(record, last) {
			return nil, errIDMismatch
		}
		p.w.Record = record
	}
	p.status, p.record = http.StatusOK, p.w.Record
	return p, nil
}

// scalar reports whether an id's JSON text is one value, not an array or
// an object: the log names a record by its id's value, and an array id
// would hold for a path of any of its elements, so that two records could
// answer to one path.
func scalar(id []byte) bool {
	return len(id) > 0 && id[0] != '[' && id[0] != '{'
}

// recordCopy is how many bytes p's record holds apart from the request's
// body: 0 when it is the body itself.
func recordCopy(p *planned, ws *writeState) int64 {
	r := p.w.Record
	if len(r) == 0 || len(ws.body) > 0 && &r[0] == &ws.body[0] {
		return 0
	}
	return int64(len(r))
}

// firstHolding returns the first record of coll for which every condition
// holds, found as an item route's read finds it (through the equality
// index of the field).
func firstHolding(coll *jsondoc.Document, conds []query.Condition) (int, bool) {
	res := query.Item(query.Scope{Conditions: conds}).Run(coll)
	if len(res.Records) == 0 {
		return 0, false
	}
	return int(res.Records[0]), true
}

// holdsFor reports whether the conditions hold for record, a JSON object.
func holdsFor(record []byte, conds []query.Condition) bool {
	doc, err := jsondoc.Parse(append(append([]byte{'['}, record...), ']'))
	if err != nil || doc.Len() != 1 {
		return false
	}
	var sc query.Scratch
	return query.Conditions(conds).Holds(doc, 0, &sc)
}

// newID is the id a create assigns (§12.1): one more than the largest id
// when every record's id is an integer, else a random UUID.
func newID(coll *jsondoc.Document, field []string) []byte {
	if next, ok := query.NextIntID(coll, field); ok {
		return strconv.AppendInt(nil, next, 10)
	}
	return strconv.AppendQuote(nil, uuid.NewString())
}

// memberText returns the JSON text of the value at path in obj, a JSON
// object (validated); false when it has none.
func memberText(obj []byte, path []string) ([]byte, bool) { return jsondoc.MemberText(obj, path) }

// withID returns obj, a JSON object, with member name set to id as its
// first member: every byte of obj kept.
func withID(obj []byte, name string, id []byte) []byte {
	rest := bytes.TrimSpace(obj[1:])
	out := make([]byte, 0, len(obj)+len(name)+len(id)+4)
	out = append(out, '{')
	out = strconv.AppendQuote(out, name)
	out = append(out, ':')
	out = append(out, id...)
	if rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, obj[1:]...)
}

// locationOf is the path of a record created through t (§12.1): the
// project's GET item route on the collection, filled with the create
// route's parameters and the new id, under the prefix the request came
// through; "" when there is none.
func (s *Server) locationOf(r *http.Request, t *target, p *planned) string {
	b := t.binding
	if p.w.Op != decoy.WriteCreate || b.Location == nil {
		return ""
	}
	values := make([]string, 0, len(t.params)+1)
	for _, pa := range t.params {
		values = append(values, pa.Value)
	}
	id := p.w.Key
	if unq, err := strconv.Unquote(id); err == nil {
		id = unq
	}
	values = append(values, id)
	if len(values) != len(b.Location.Params()) {
		return ""
	}
	return t.prefix + b.Location.Expand(values)
}

// announceWrite tells the other replicas that mock id's live data is at
// write number seq: they apply the writes they lack. The write is stored
// already, so a client that leaves does not stop the announcement.
func (s *Server) announceWrite(ctx context.Context, id string, seq int64) {
	s.admin.Announce(context.WithoutCancel(ctx), decoy.WriteAnnouncement+id+":"+strconv.FormatInt(seq, 10))
}

// writeLocks are the turns writes to one mock take on this replica: a
// mock's writes take the lock its id hashes to.
type writeLocks struct {
	seed  maphash.Seed
	locks [64]sync.Mutex
}

func (s *Server) writeLock(id string) *sync.Mutex {
	return &s.writes.locks[maphash.String(s.writes.seed, id)%uint64(len(s.writes.locks))]
}

// Compaction: a mock's log is made its base again at every
// compactEvery-th write, by the replica that took it (the writes' numbers
// are the mock's, on every replica, so nothing is counted apart). At most
// maxCompactions run at once on a replica, one per mock, in the background
// (compactor); one whose turn finds no room is left to the next turn, well within the
// log's bound (decoy.DefaultMaxLiveWrites). A compaction another replica
// made since changes nothing (LiveStore.Compact).
//
// A compaction writes the whole data, so the writes between two share its
// cost: every compactAfter writes, or on large data as many more as keep
// that share near compactShare bytes a write (doubling, so that every
// turn of a larger interval is one of a smaller's), at most
// maxCompactAfter.
const (
	compactAfter    = 2000
	compactShare    = 2 << 10
	maxCompactAfter = 16000
)

// The log's bytes bound it too, whatever the number of its writes: a
// mock is compacted once the writes past its base take compactBytes (as
// many as its data, at least minCompactBytes; a compaction writes the
// data, so it costs at most what the writes did), and while they take
// logBehind times that (compactions failed, or fell behind), its writes
// are refused with a 503 until one has run. Without it, large records
// written over and over (a PUT of a 60 MiB record, anonymously, on an
// open route) filled the log by the gigabyte between two turns, and a
// load caught up through all of it in memory at once.
const (
	minCompactBytes = 8 << 20
	logBehind       = 4
)

// compactBytes is how many bytes of writes past its base start the
// compaction of live data of size bytes.
func compactBytes(size int64) int64 { return max(size, minCompactBytes) }

// logBehind reports whether the writes in e's log past its base are
// logBehind times a compaction's turn, and starts one if so: a write then
// waits (errLogBehind).
func (s *Server) logBehind(e *mockcache.Entry) bool {
	lb := e.LogBytes()
	if lb <= logBehind*compactBytes(e.Size()) {
		return false
	}
	s.maybeCompact(e.Mock.ID, 1, e.Size(), lb)
	return true
}

// errLogBehind answers a write to a mock whose log waits for a compaction.
var errLogBehind = answer.New(http.StatusServiceUnavailable, "Too many writes to this mock waiting to be compacted; try again", "Retry-After", "1")

// compactEvery is the interval between the compactions of live data of
// size bytes.
func compactEvery(size int64) int64 {
	n := int64(compactAfter)
	for size/n > compactShare && n < maxCompactAfter {
		n *= 2
	}
	return n
}

// compactTimeout bounds a compaction.
const compactTimeout = 5 * time.Minute

// compactor runs the compactions of this replica: at most maxCompactions
// at once, one per mock. After a mock's compaction failed (a store down, a
// disk full), that mock's waits a while, doubling from a second up to
// maxCompactBackoff, so that the writes that keep asking for one do not
// each rewrite its data again in vain; other mocks' go on. It remembers
// the failures of at most maxCompactFailing mocks: past them (a store
// down for every mock), every mock waits, the wait doubling with each
// failure past them in a row as a mock's does.
type compactor struct {
	mu      sync.Mutex
	running map[string]bool         // at most maxCompactions
	failing map[string]compactDelay // at most maxCompactFailing
	// overflow holds every mock back: the failures while failing was full.
	overflow compactDelay
}

// compactDelay is a mock's failures in a row and the time before which its
// next compaction waits.
type compactDelay struct {
	failures  int
	notBefore time.Time
}

// failed returns d after one more failure at now.
func (d compactDelay) failed(now time.Time) compactDelay {
	d.failures++
	d.notBefore = now.Add(min(time.Second<<min(d.failures-1, 16), maxCompactBackoff))
	return d
}

const (
	maxCompactions    = 2
	maxCompactBackoff = 30 * time.Second
	maxCompactFailing = 1024
)

// start reports whether a compaction of mock id may start now, and counts
// it as running if so.
func (c *compactor) start(id string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] || len(c.running) >= maxCompactions || now.Before(c.overflow.notBefore) || now.Before(c.failing[id].notBefore) {
		return false
	}
	if c.running == nil {
		c.running = map[string]bool{}
	}
	c.running[id] = true
	return true
}

// done ends the compaction of mock id, failed when failed.
func (c *compactor) done(id string, failed bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
	if !failed {
		delete(c.failing, id)
		c.overflow = compactDelay{} // the store compacts again
		return
	}
	d := c.failing[id].failed(now)
	if _, known := c.failing[id]; !known && len(c.failing) >= maxCompactFailing {
		// Forget the mocks whose wait ended long since (a failure then
		// counts as a first again); if none, hold every mock back.
		for k, v := range c.failing {
			if now.Sub(v.notBefore) > maxCompactBackoff {
				delete(c.failing, k)
			}
		}
		if len(c.failing) >= maxCompactFailing {
			c.overflow = c.overflow.failed(now)
			return
		}
	}
	if c.failing == nil {
		c.failing = map[string]compactDelay{}
	}
	c.failing[id] = d
}

// maybeCompact compacts mock id's log in the background when write number
// seq, which left the live data at size bytes and the log past its base
// at logBytes, is its turn.
func (s *Server) maybeCompact(id string, seq, size, logBytes int64) {
	if seq%compactEvery(size) != 0 && logBytes < compactBytes(size) || !s.compact.start(id, s.cfg.Now()) {
		return
	}
	go func() {
		err := s.compactSafely(id)
		if decoy.ErrorCode(err) == decoy.ENOTFOUND {
			err = nil // the mock was deleted meanwhile: nothing to compact
		}
		if err != nil {
			s.log.Warn("could not compact a mock's writes; they stay in its log", "mock", id, "err", err)
		}
		s.compact.done(id, err != nil, s.cfg.Now())
	}()
}

// compactSafely runs compactMock within compactTimeout, a panic in it
// logged and returned as a failure: it runs outside any request, where a
// panic would end the process.
func (s *Server) compactSafely(id string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), compactTimeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			s.metrics.panics.Inc()
			s.log.Error("panic compacting a mock's writes", "mock", id, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return s.compactMock(ctx, id)
}

// compactMock writes mock id's live data, as this replica holds it, as its
// new base.
func (s *Server) compactMock(ctx context.Context, id string) error {
	e, err := s.cache.Get(ctx, id)
	if err != nil {
		return err
	}
	defer e.Release()
	if e.LiveSeq() == 0 {
		return nil
	}
	if err := s.live.Compact(ctx, id, e.LiveSeq(), decoy.Data{Bytes: e.Bytes()}); err != nil {
		return err
	}
	e.MarkCompacted()
	return nil
}
