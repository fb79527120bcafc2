package redis

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

// JournalTTL is how long a project's journal is kept after its last
// entry: the streams of projects no longer used, or deleted, leave Redis.
const JournalTTL = 7 * 24 * time.Hour

// journalScan is the most entries a listing reads from Redis at once.
const journalScan = 200

// appendScript appends entries to a project's stream (KEYS[1]), each of
// ARGV[3..] an entry's record, as the field "r"; then trims the stream to
// about ARGV[1] entries, once, and sets its expiry (ARGV[2] seconds). It
// answers the number of entries. A batch of a project is one command, so
// that the client does the work of one command, not of one an entry.
var appendScript = goredis.NewScript(`
for i = 3, #ARGV do
  redis.call('XADD', KEYS[1], '*', 'r', ARGV[i])
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', '~', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return #ARGV - 2
`)

// journalClient is what the journal needs of a Redis client.
type journalClient interface {
	goredis.Scripter
	Pipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
	XRevRangeN(ctx context.Context, stream, start, stop string, count int64) *goredis.XMessageSliceCmd
	XRangeN(ctx context.Context, stream, start, stop string, count int64) *goredis.XMessageSliceCmd
	XLen(ctx context.Context, stream string) *goredis.IntCmd
	Del(ctx context.Context, keys ...string) *goredis.IntCmd
}

// Journal keeps projects' request journals (§13.2) in Redis Streams, one
// per project at prefix+"{project:"+id+"}:journal", so that the journal is
// one across replicas. An entry is the field "r", its record
// (decoy.JournalRecord, binary); its ID is the stream's. Each batch is one
// pipeline of a script per project (appendScript): an XADD per entry, then
// one XTRIM MAXLEN ~ size and one EXPIRE of JournalTTL.
//
// Entries written by earlier versions hold the field "e", the entry's
// JSON, instead: they are read too. Those versions skip the entries of
// "r" (they read as none), so that while a rolling upgrade runs, the
// replicas not yet upgraded list only what they themselves wrote.
//
// "MAXLEN ~" trims whole nodes of the stream, which may then hold up to a
// node (100 entries) more than size; listings and counts see the newest
// size entries only, so that a project's journal holds at most size.
type Journal struct {
	c      journalClient
	prefix string
	size   int64
}

var _ decoy.JournalStore = (*Journal)(nil)

// recordArg is a record as an argument of a command: go-redis writes it
// as its bytes (MarshalBinary), and a pointer to one is made an interface
// value without an allocation, as a []byte is not.
type recordArg []byte

func (r *recordArg) MarshalBinary() ([]byte, error) { return *r, nil }

// NewJournal returns the journals of prefix's deployment, each of at
// most size entries.
func NewJournal(c goredis.UniversalClient, prefix string, size int) *Journal {
	return &Journal{c: c, prefix: prefix, size: int64(max(size, 1))}
}

func (j *Journal) key(projectID string) string {
	return j.prefix + "{project:" + projectID + "}:journal"
}

// Append writes a batch of records in one pipeline; Redis gives their
// IDs. go-redis keeps no argument once Pipelined returns: the records are
// the caller's again.
func (j *Journal) Append(ctx context.Context, batch map[string][][]byte) error {
	type write struct {
		key  string
		args []any
		cmd  *goredis.Cmd
	}
	size, ttl := strconv.FormatInt(j.size, 10), strconv.Itoa(int(JournalTTL/time.Second))
	writes := make([]write, 0, len(batch))
	for project, records := range batch {
		if len(records) == 0 {
			continue
		}
		w := write{key: j.key(project), args: make([]any, 2, 2+len(records))}
		w.args[0], w.args[1] = size, ttl
		for i := range records {
			w.args = append(w.args, (*recordArg)(&records[i]))
		}
		writes = append(writes, w)
	}
	pipeline := func(ws []*write) {
		_, _ = j.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, w := range ws {
				w.cmd = appendScript.EvalSha(ctx, p, []string{w.key}, w.args...)
			}
			return nil
		})
	}
	all := make([]*write, len(writes))
	for i := range writes {
		all[i] = &writes[i]
	}
	pipeline(all)
	// A Redis that does not know the script yet (a new or flushed one, a
	// node of a cluster): loaded, and those writes sent again; none of
	// their entries was written.
	var missing []*write
	for _, w := range all {
		if goredis.HasErrorPrefix(w.cmd.Err(), "NOSCRIPT") {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		if err := appendScript.Load(ctx, j.c).Err(); err != nil {
			return unavailable("append to the request journal", err)
		}
		pipeline(missing)
	}
	for _, w := range all {
		if err := w.cmd.Err(); err != nil {
			return unavailable("append to the request journal", err)
		}
	}
	return nil
}

// parseJournalCursor reads a listing's cursor: the ID of the last entry
// a page showed, and its rank (1 for the newest) when the listing began.
func parseJournalCursor(cursor string) (id string, rank int64, ok bool) {
	id, r, found := strings.Cut(cursor, ".")
	if !found {
		return "", 0, false
	}
	if _, _, ok := decoy.ParseJournalID(id); !ok {
		return "", 0, false
	}
	rank, err := strconv.ParseInt(r, 10, 64)
	return id, rank, err == nil && rank > 0
}

// List returns up to limit entries of a project that pass f, newest
// first, among the newest size entries. The cursor carries the rank its
// entry had, so that the pages of one listing together see size entries
// at most, as the first page saw them.
func (j *Journal) List(ctx context.Context, projectID string, f decoy.JournalFilter, cursor string, limit int) ([]*decoy.JournalEntry, string, error) {
	start, rank := "+", int64(0)
	if cursor != "" {
		id, r, ok := parseJournalCursor(cursor)
		if !ok {
			return nil, "", decoy.Errorf(decoy.EINVALID, "Invalid cursor")
		}
		start, rank = "("+id, r
	}
	if limit <= 0 {
		return nil, "", nil
	}
	var out []*decoy.JournalEntry
	var last int64 // the rank of out's last entry
	more, err := j.scan(ctx, projectID, start, rank, func(e *decoy.JournalEntry, r int64) bool {
		if !f.Matches(e) {
			return true
		}
		if len(out) == limit {
			return false
		}
		out, last = append(out, e), r
		return true
	})
	if err != nil || !more {
		return out, "", err
	}
	return out, out[limit-1].ID + "." + strconv.FormatInt(last, 10), nil
}

// Count counts a project's entries that pass f, among the newest size.
func (j *Journal) Count(ctx context.Context, projectID string, f decoy.JournalFilter) (int64, error) {
	if f == (decoy.JournalFilter{}) {
		n, err := j.c.XLen(ctx, j.key(projectID)).Result()
		if err != nil {
			return 0, unavailable("count the request journal", err)
		}
		return min(n, j.size), nil
	}
	var n int64
	_, err := j.scan(ctx, projectID, "+", 0, func(e *decoy.JournalEntry, _ int64) bool {
		if f.Matches(e) {
			n++
		}
		return true
	})
	return n, err
}

// scan calls visit with a project's entries, newest first, from start
// (an XREVRANGE start) on, each with its rank, after rank, up to the
// newest size entries, until visit returns false. stopped reports that
// visit did.
func (j *Journal) scan(ctx context.Context, projectID, start string, rank int64, visit func(*decoy.JournalEntry, int64) bool) (stopped bool, err error) {
	key := j.key(projectID)
	for rank < j.size {
		count := min(j.size-rank, journalScan)
		msgs, err := j.c.XRevRangeN(ctx, key, start, "-", count).Result()
		if err != nil {
			return false, unavailable("read the request journal", err)
		}
		for _, m := range msgs {
			rank++
			e, ok := journalEntry(m)
			if ok && !visit(e, rank) {
				return true, nil
			}
		}
		if int64(len(msgs)) < count {
			break
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
	return false, nil
}

// journalEntry decodes a stream's message into an entry: its record ("r"),
// or the JSON ("e") of an earlier version's; ok is false for one that
// holds neither (written by something else).
func journalEntry(m goredis.XMessage) (*decoy.JournalEntry, bool) {
	var e *decoy.JournalEntry
	if r, ok := m.Values["r"].(string); ok {
		var err error
		if e, err = decoy.ParseJournalRecord([]byte(r)); err != nil {
			return nil, false
		}
	} else if s, ok := m.Values["e"].(string); ok {
		e = new(decoy.JournalEntry)
		if json.Unmarshal([]byte(s), e) != nil {
			return nil, false
		}
	} else {
		return nil, false
	}
	e.ID = m.ID
	return e, true
}

// After returns up to limit entries of a project newer than id, oldest
// first.
func (j *Journal) After(ctx context.Context, projectID, id string, limit int) ([]*decoy.JournalEntry, error) {
	if _, _, ok := decoy.ParseJournalID(id); !ok {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid entry id")
	}
	msgs, err := j.c.XRangeN(ctx, j.key(projectID), "("+id, "+", int64(limit)).Result()
	if err != nil {
		return nil, unavailable("read the request journal", err)
	}
	var out []*decoy.JournalEntry
	for _, m := range msgs {
		if e, ok := journalEntry(m); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Clear deletes a project's journal.
func (j *Journal) Clear(ctx context.Context, projectID string) error {
	if err := j.c.Del(ctx, j.key(projectID)).Err(); err != nil {
		return unavailable("clear the request journal", err)
	}
	return nil
}
