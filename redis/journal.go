package redis

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

// JournalTTL is how long a project's journal is kept after its last
// entry: the streams of projects no longer used, or deleted, leave Redis.
const JournalTTL = 7 * 24 * time.Hour

// journalScan is the most messages a listing reads from Redis at once;
// it reads fewer when the messages hold many entries or bytes (see
// pager).
const journalScan = 200

// journalPageBytes is about the most bytes of records a listing reads
// from Redis at once, and maxMessage the most a message holds (or one
// record, if larger): a batch of large bodies is several messages.
const (
	journalPageBytes = 8 << 20
	maxMessage       = 1 << 20
)

// pager chooses how many messages a reading of a stream asks for next,
// from what the messages read so far held.
type pager struct{ msgs, entries, bytes int64 }

// count is how many messages to ask for, to see about want entries more:
// at first a few; then as many as hold want entries, as far as the
// messages read so far tell, within journalScan and journalPageBytes.
func (p *pager) count(want int64) int64 {
	if p.msgs == 0 {
		return min(want, 4)
	}
	n := want * p.msgs / max(p.entries, 1)
	if p.bytes > 0 {
		n = min(n, journalPageBytes*p.msgs/p.bytes)
	}
	return max(1, min(n, journalScan))
}

// saw notes a message read.
func (p *pager) saw(m goredis.XMessage, entries int) {
	p.msgs, p.entries = p.msgs+1, p.entries+int64(entries)
	for _, v := range m.Values {
		if s, ok := v.(string); ok {
			p.bytes += int64(len(s))
		}
	}
}

// keptPack is the largest buffer of packed records a Journal keeps for
// the next batch.
const keptPack = 1 << 20

// packBits is how many of an entry's ID's sequence bits give its place
// in its message: a message holds at most 1<<packBits entries.
const packBits = 10

// trimScript keeps a project's stream (KEYS[1]) at its newest size
// entries or a little more, once a batch's messages were added to it: it
// counts the entries (KEYS[2]) and keeps each message's count, oldest
// first (the list KEYS[3]). ARGV[1] is size, ARGV[2] the expiry in
// seconds, and ARGV[3..] the counts of the messages just added, oldest
// first. The oldest messages leave for as long as what is left still
// holds size (XTRIM MAXLEN, exact), so that the stream keeps at most size
// plus its oldest message's entries. The records never pass through Lua,
// which reads a string as it makes one, byte by byte: a script of a
// batch's records cost Redis five times a plain XADD of them.
//
// The script never reads the stream's messages, only their number. When
// the counts do not match it (some lost to an eviction, messages an
// earlier version added, or an earlier version's Clear), they are mended
// from that number: the counts of messages gone leave from the oldest, a
// message without a count is taken for one entry (as an earlier
// version's are), and the total is summed again. A count that is not a
// number is none. Until the messages taken for one entry leave, the
// stream may hold more than size; listings and counts still see the
// newest size entries only.
//
// A batch's transaction runs it by its SHA1 (EVALSHA): an EVAL has Redis
// hash the script's text each time, a tenth of its work for a batch of
// 150 entries. A Redis that lost it (restarted, SCRIPT FLUSH) answers
// NOSCRIPT: the batch's messages are in, and its counts are added by an
// EVAL of the text at once, which loads it again.
var trimScript = goredis.NewScript(`
local added = #ARGV - 2
local before = redis.call('XLEN', KEYS[1]) - added
local known = redis.pcall('LLEN', KEYS[3])
if type(known) ~= 'number' then
  redis.call('DEL', KEYS[3])
  known = 0
end
local total = tonumber(redis.pcall('GET', KEYS[2]))
if not total or known ~= before or (before == 0 and total ~= 0) then
  if known > before then
    redis.call('LTRIM', KEYS[3], known - before, -1)
  end
  for i = known + 1, before, 500 do
    local ones = {}
    for k = 1, math.min(500, before - i + 1) do ones[k] = 1 end
    redis.call('LPUSH', KEYS[3], unpack(ones))
  end
  total = 0
  for _, n in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do total = total + (tonumber(n) or 0) end
end
for i = 3, #ARGV do
  redis.call('RPUSH', KEYS[3], ARGV[i])
  total = total + tonumber(ARGV[i])
end
local size, gone = tonumber(ARGV[1]), 0
while true do
  local v = redis.call('LINDEX', KEYS[3], 0)
  if not v then break end
  local n = tonumber(v) or 0
  if total - n < size then break end
  redis.call('LPOP', KEYS[3])
  total, gone = total - n, gone + 1
end
if gone > 0 then redis.call('XTRIM', KEYS[1], 'MAXLEN', redis.call('XLEN', KEYS[1]) - gone) end
redis.call('SET', KEYS[2], total, 'EX', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[3], ARGV[2])
return total
`)

// journalClient is what the journal needs of a Redis client.
type journalClient interface {
	goredis.Scripter
	Pipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
	TxPipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
	XRevRangeN(ctx context.Context, stream, start, stop string, count int64) *goredis.XMessageSliceCmd
	XRangeN(ctx context.Context, stream, start, stop string, count int64) *goredis.XMessageSliceCmd
	Get(ctx context.Context, key string) *goredis.StringCmd
	Del(ctx context.Context, keys ...string) *goredis.IntCmd
}

// Journal keeps projects' request journals (§13.2) in Redis Streams, one
// per project at prefix+"{project:"+id+"}:journal", so that the journal is
// one across replicas, with the count of its entries and of each
// message's beside it (the key and ":n", ":i"; see trimScript).
//
// A batch of a project's entries is one message of the stream: "n", how
// many, and "b", their records (decoy.JournalRecord, binary), each after
// its length (a uvarint), oldest first. Redis's work for a message is
// mostly its own, whatever it holds: a message an entry cost Redis about
// 15,000 instructions an entry, and 22,800 appended by a script; packed,
// with trimScript run by its SHA1, about 1,000
// (server.BenchmarkJournalInstructions counts Redis's work with the
// server's).
//
// An entry's ID is its message's, "<ms>-<seq>", with seq made
// seq<<packBits plus the entry's place in the message: IDs still grow
// with time across replicas, and a cursor names one entry.
//
// Entries written by earlier versions are messages of one entry, the
// field "r" (its record) or "e" (its JSON): they are read too. Those
// versions skip messages of "b" (they read as none), so that while a
// rolling upgrade runs, the replicas not yet upgraded list only what
// they wrote themselves. An earlier version's entry IDs of a sequence
// above 0 name other entries now: a Studio that reconnects across the
// upgrade may be sent a few entries again.
//
// trimScript trims the stream to size entries or a message more;
// listings and counts see the newest size entries only, so that a
// project's journal holds at most size.
type Journal struct {
	c      journalClient
	prefix string
	size   int64

	// mu guards buf, the packed records of the batch Append writes, kept
	// from one batch to the next: a batch's records made anew each time
	// are garbage the collector scans for.
	mu  sync.Mutex
	buf []byte
}

var _ decoy.JournalStore = (*Journal)(nil)

// bytesArg is a command's argument written as its bytes (MarshalBinary);
// a pointer to one is made an interface value without an allocation, as
// a []byte is not.
type bytesArg []byte

func (r *bytesArg) MarshalBinary() ([]byte, error) { return *r, nil }

// NewJournal returns the journals of prefix's deployment, each of at
// most size entries.
func NewJournal(c goredis.UniversalClient, prefix string, size int) *Journal {
	return &Journal{c: c, prefix: prefix, size: int64(max(size, 1))}
}

func (j *Journal) key(projectID string) string {
	return j.prefix + "{project:" + projectID + "}:journal"
}

// pack appends records to b as a message's "b": each after its length.
func pack(b []byte, records [][]byte) []byte {
	for _, r := range records {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// Append writes a batch in one transaction (MULTI; on a cluster, one a
// project), each project's
// records a message (or more: 1<<packBits entries and maxMessage bytes
// at most each, or one record), then
// trimScript; Redis gives the messages' IDs. A transaction, so that the
// counts trimScript keeps are in the stream's order when replicas write
// at once.
func (j *Journal) Append(ctx context.Context, batch map[string][][]byte) error {
	size, ttl := strconv.FormatInt(j.size, 10), strconv.Itoa(int(JournalTTL/time.Second))
	j.mu.Lock()
	defer j.mu.Unlock()
	buf := j.buf[:0]
	// The whole batch's size first: buf grows once at most, and the
	// messages packed before are not moved.
	total := 0
	for _, records := range batch {
		for _, r := range records {
			total += binary.MaxVarintLen32 + len(r)
		}
	}
	buf = slices.Grow(buf, total)
	defer func() {
		if cap(buf) <= keptPack {
			j.buf = buf[:0]
		} else {
			j.buf = nil // a batch of large bodies: not kept
		}
	}()
	// trims are the batch's trimScript calls, each with its keys and
	// arguments, for an EVAL of those the transaction's EVALSHA found
	// missing.
	type trim struct {
		cmd  *goredis.Cmd
		keys []string
		args []any
	}
	var trims []trim
	// queue queues a project's transaction's commands in p.
	queue := func(p goredis.Pipeliner, project string, records [][]byte) {
		key := j.key(project)
		args := []any{size, ttl}
		for len(records) > 0 {
			n, bytes := 1, len(records[0])
			for n < min(len(records), 1<<packBits) && bytes+len(records[n]) <= maxMessage {
				bytes += len(records[n])
				n++
			}
			start := len(buf)
			buf = pack(buf, records[:n])
			packed := bytesArg(buf[start:len(buf):len(buf)])
			p.Do(ctx, "XADD", key, "*", "n", n, "b", &packed)
			args = append(args, n)
			records = records[n:]
		}
		keys := []string{key, key + ":n", key + ":i"}
		trims = append(trims, trim{trimScript.EvalSha(ctx, p, keys, args...), keys, args})
	}
	var failed error
	write := func(fn func(goredis.Pipeliner) error) {
		trims = trims[:0]
		cmds, err := j.c.TxPipelined(ctx, fn)
		if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
			err = nil // the commands' own errors tell
		}
		// A trim Redis did not have the script for: its project's
		// messages are in, and their counts are added now, whatever
		// another project's commands answered. Outside the transaction:
		// should another replica write the project in between, its
		// counts come out of the stream's order until the messages
		// leave, and the script mends them from the stream's length.
		for _, t := range trims {
			if e := t.cmd.Err(); e != nil && goredis.HasErrorPrefix(e, "NOSCRIPT") {
				err = cmp.Or(err, trimScript.Eval(ctx, j.c, t.keys, t.args...).Err())
			}
		}
		for _, c := range cmds {
			if e := c.Err(); e != nil && !goredis.HasErrorPrefix(e, "NOSCRIPT") {
				err = cmp.Or(err, e)
			}
		}
		failed = cmp.Or(failed, err)
	}
	if _, cluster := j.c.(*goredis.ClusterClient); cluster {
		// A cluster's transaction is of one slot: a project's keys share
		// theirs, not the projects'.
		for project, records := range batch {
			if len(records) > 0 {
				write(func(p goredis.Pipeliner) error { queue(p, project, records); return nil })
			}
		}
	} else {
		write(func(p goredis.Pipeliner) error {
			for project, records := range batch {
				if len(records) > 0 {
					queue(p, project, records)
				}
			}
			return nil
		})
	}
	if failed != nil {
		return unavailable("append to the request journal", failed)
	}
	return nil
}

// place is an entry's place in the stream: its message's ID and its index
// in the message.
type place struct {
	msg   string
	index int
}

// parsePlace reads an entry's ID (see Journal).
func parsePlace(id string) (place, bool) {
	ms, seq, ok := decoy.ParseJournalID(id)
	if !ok {
		return place{}, false
	}
	return place{strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq>>packBits, 10), int(seq & (1<<packBits - 1))}, true
}

// entryID is the ID of the entry at index of the message msg.
func entryID(msg string, index int) (string, bool) {
	ms, seq, ok := decoy.ParseJournalID(msg)
	if !ok || seq >= 1<<(64-packBits) {
		return "", false
	}
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq<<packBits|uint64(index), 10), true
}

// parseJournalCursor reads a listing's cursor: the ID of the last entry
// a page showed, and its rank (1 for the newest) when the listing began.
func parseJournalCursor(cursor string) (at place, rank int64, ok bool) {
	id, r, found := strings.Cut(cursor, ".")
	if !found {
		return place{}, 0, false
	}
	if at, ok = parsePlace(id); !ok {
		return place{}, 0, false
	}
	rank, err := strconv.ParseInt(r, 10, 64)
	return at, rank, err == nil && rank > 0
}

// List returns up to limit entries of a project that pass f, newest
// first, among the newest size entries. The cursor carries the rank its
// entry had, so that the pages of one listing together see size entries
// at most, as the first page saw them.
func (j *Journal) List(ctx context.Context, projectID string, f decoy.JournalFilter, cursor string, limit int) ([]*decoy.JournalEntry, string, error) {
	var from place // the zero place: from the newest
	var rank int64
	if cursor != "" {
		var ok bool
		if from, rank, ok = parseJournalCursor(cursor); !ok {
			return nil, "", decoy.Errorf(decoy.EINVALID, "Invalid cursor")
		}
	}
	if limit <= 0 {
		return nil, "", nil
	}
	var out []*decoy.JournalEntry
	var last int64 // the rank of out's last entry
	more, err := j.scan(ctx, projectID, from, rank, func(e *decoy.JournalEntry, r int64) bool {
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
		key := j.key(projectID)
		var msgs *goredis.IntCmd
		var n *goredis.StringCmd
		_, err := j.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			msgs, n = p.XLen(ctx, key), p.Get(ctx, key+":n")
			return nil
		})
		if err != nil && err != goredis.Nil {
			return 0, unavailable("count the request journal", err)
		}
		if msgs.Val() == 0 {
			return 0, nil
		}
		if total, err := n.Int64(); err == nil {
			return min(total, j.size), nil
		}
		// No count: one of an earlier version's journal.
	}
	var n int64
	_, err := j.scan(ctx, projectID, place{}, 0, func(e *decoy.JournalEntry, _ int64) bool {
		if f.Matches(e) {
			n++
		}
		return true
	})
	return n, err
}

// scan calls visit with a project's entries, newest first, from before
// the entry at from (from the newest if from is the zero place) on, each
// with its rank, after rank, up to the newest size entries, until visit
// returns false. stopped reports that visit did.
func (j *Journal) scan(ctx context.Context, projectID string, from place, rank int64, visit func(*decoy.JournalEntry, int64) bool) (stopped bool, err error) {
	key := j.key(projectID)
	start := "+"
	if from.msg != "" {
		start = from.msg
	}
	var p pager
	for rank < j.size {
		count := p.count(j.size - rank)
		page, err := j.c.XRevRangeN(ctx, key, start, "-", count).Result()
		if err != nil {
			return false, unavailable("read the request journal", err)
		}
		for _, m := range page {
			es := journalEntries(m)
			p.saw(m, len(es))
			if m.ID == from.msg {
				es = es[:min(len(es), from.index)]
			}
			for i := len(es) - 1; i >= 0 && rank < j.size; i-- {
				rank++
				if es[i] != nil && !visit(es[i], rank) {
					return true, nil
				}
			}
		}
		if int64(len(page)) < count {
			break
		}
		start = "(" + page[len(page)-1].ID
	}
	return false, nil
}

// journalEntries decodes a stream's message into its entries, oldest
// first: the records of "b", or the one record of "r", or the JSON ("e")
// of an earlier version's. An entry that cannot be read is nil, so that
// the others keep their places; a message that holds none of these
// (written by something else) has no entries.
func journalEntries(m goredis.XMessage) []*decoy.JournalEntry {
	var out []*decoy.JournalEntry
	if b, ok := m.Values["b"].(string); ok {
		for len(b) > 0 && len(out) < 1<<packBits {
			n, w := binary.Uvarint([]byte(b[:min(len(b), binary.MaxVarintLen64)]))
			if w <= 0 || n > uint64(len(b)-w) {
				break
			}
			out, b = append(out, parseRecord(b[w:w+int(n)])), b[w+int(n):]
		}
	} else if r, ok := m.Values["r"].(string); ok {
		out = append(out, parseRecord(r))
	} else if s, ok := m.Values["e"].(string); ok {
		e := new(decoy.JournalEntry)
		if json.Unmarshal([]byte(s), e) != nil {
			e = nil
		}
		out = append(out, e)
	}
	for i, e := range out {
		if e == nil {
			continue
		}
		id, ok := entryID(m.ID, i)
		if !ok {
			out[i] = nil
			continue
		}
		e.ID = id
	}
	return out
}

// parseRecord reads a record, nil when it is not one.
func parseRecord(r string) *decoy.JournalEntry {
	e, err := decoy.ParseJournalRecord([]byte(r))
	if err != nil {
		return nil
	}
	return e
}

// After returns up to limit entries of a project newer than id, oldest
// first.
func (j *Journal) After(ctx context.Context, projectID, id string, limit int) ([]*decoy.JournalEntry, error) {
	from, ok := parsePlace(id)
	if !ok {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid entry id")
	}
	var out []*decoy.JournalEntry
	start := from.msg // from its message: the entries after id in it too
	var p pager
	for len(out) < limit {
		count := p.count(int64(limit - len(out)))
		page, err := j.c.XRangeN(ctx, j.key(projectID), start, "+", count).Result()
		if err != nil {
			return nil, unavailable("read the request journal", err)
		}
		for _, m := range page {
			es := journalEntries(m)
			p.saw(m, len(es))
			if m.ID == from.msg {
				es = es[min(len(es), from.index+1):]
			}
			for _, e := range es {
				if e != nil && len(out) < limit {
					out = append(out, e)
				}
			}
		}
		if int64(len(page)) < count {
			break
		}
		start = "(" + page[len(page)-1].ID
	}
	return out, nil
}

// Clear deletes a project's journal.
func (j *Journal) Clear(ctx context.Context, projectID string) error {
	key := j.key(projectID)
	if err := j.c.Del(ctx, key, key+":n", key+":i").Err(); err != nil {
		return unavailable("clear the request journal", err)
	}
	return nil
}
