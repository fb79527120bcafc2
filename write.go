package decoy

import (
	"context"
	"time"
)

// Writes (§12 of the contract): routes whose action is create, replace,
// update or delete change the records of their mock's collection. A
// mock's live data, which every read sees, is its base (the current
// version's data, or what a compaction wrote since) with its writes
// applied in order. A write costs its record: it is one row appended to
// the mock's log of writes, never a rewrite of the document; compaction
// writes a new base now and then, in the background, and drops the writes
// it holds.

// Write operations.
const (
	WriteCreate  = "create"
	WriteReplace = "replace"
	WriteUpdate  = "update"
	WriteDelete  = "delete"
)

// Write is one change to a mock's live data, as its log keeps it: enough
// to apply it again to the live data before it, on any replica, without
// the request it came from.
type Write struct {
	// Seq numbers the mock's writes: one more than the number of the
	// live data it was computed on (see LiveStore). Numbers never go back
	// while the mock lives.
	Seq int64 `json:"seq"`
	// Op is one of the Write constants.
	Op string `json:"op"`
	// Items is the dot path of the collection inside the data ("": the
	// data is the collection).
	Items string `json:"items"`
	// Field is the dot path of the records' id field; Key is the id of
	// the record replaced, updated or deleted, as JSON text (42, "a7"):
	// the first record whose Field equals Key (§1.3 equality) is the one.
	Field string `json:"field"`
	Key   string `json:"key"`
	// Record is the new record, byte for byte (create, replace, update).
	Record []byte    `json:"record"`
	At     time.Time `json:"at"`
}

// LiveState is where a mock's live data stands.
type LiveState struct {
	// Seq is the number of the live data: of the mock's last write, or of
	// the last reset when none came after it (0: neither yet).
	Seq int64
	// BaseSeq is the number of its base: the writes up to it are in the
	// base and gone from the log; those after it, up to Seq, are in the
	// log. It is Seq, and the base the current version's data, after a
	// reset.
	BaseSeq int64
	// Size is the live data's size in bytes, as the writes left it (the
	// current version's size when there are none).
	Size int64
}

// DefaultMaxLiveWrites is how many writes a mock's log holds after its
// base, unless configured otherwise: the server compacts long before, and
// a write past it waits for a compaction (EUNAVAILABLE).
const DefaultMaxLiveWrites = 100_000

// LiveStore keeps mocks' live data: their logs of writes and their bases.
// Both stores implement it; storetest holds them to one behaviour.
//
// The live data is numbered: each write takes the number after the live
// data it was computed on, and a reset of the live data (ResetLive, or new
// data: ReplaceMockData, a restore, a template run, an import) takes one
// of its own, which no write holds, and changes the mock's Version.
// Numbers never go back, so that a number names one state of the live
// data: a write or a compaction computed on live data that a reset
// replaced since is refused (ECONFLICT) or changes nothing, on any
// replica, however many writes came after the reset.
//
// A writer holding the live data at number n appends its write as n+1; on
// ECONFLICT it asks for the writes after n, applies them and tries again.
// When Writes answers ECONFLICT, the writes it lacks were compacted or
// reset away: it loads the base again (LiveBase, and FindMockData when the
// base is the current version's data) and the writes after it. A base
// that is the current version's, numbered past the LiveSeq FindMockData
// gave with that data, means new data came between the two reads: read
// again.
//
// A mock's live data counts toward its workspace's max_bytes (§12.2)
// once writes or a base set it apart from its current version: at its
// size, as one more document beside the kept versions, which its base,
// written by the next compaction, will be. The log itself is not counted
// (it is bounded, and compaction drops it), and so compaction never
// changes the count; ResetLive and new data give the bytes back.
type LiveStore interface {
	// AppendWrite appends w to mock id's log as write number w.Seq, when
	// the mock's live data is number w.Seq-1: else ECONFLICT (another
	// writer, on this replica or another, wrote first, or the live data
	// was reset: the caller catches up and tries again). size is the live
	// data's size once w is applied; a write that grows the live data and
	// takes its workspace past its max_bytes is LimitError("max_bytes")
	// (one that does not grow it passes, even over the limit). Past
	// DefaultMaxLiveWrites (or the store's bound) writes since the base,
	// EUNAVAILABLE until a compaction. The mock's UpdatedAt changes, its
	// Version does not. The write is durable when AppendWrite returns.
	// ENOTFOUND when the mock is gone; EINVALID for a write no store
	// keeps (an unknown Op, a Seq below 1, a negative size).
	AppendWrite(ctx context.Context, id string, w *Write, size int64) error
	// Writes returns mock id's writes numbered after seq, in order, at
	// most limit of them. ECONFLICT when writes after seq are gone (after
	// is before the base: see LiveStore).
	Writes(ctx context.Context, id string, after int64, limit int) ([]*Write, error)
	// Live returns where mock id's live data stands.
	Live(ctx context.Context, id string) (LiveState, error)
	// LiveBase returns mock id's base, when a compaction wrote one (ok
	// false: the base is the current version's data), and its number
	// (LiveState.BaseSeq), in either case.
	LiveBase(ctx context.Context, id string) (data Data, seq int64, ok bool, err error)
	// Compact makes data, the live data as it stands after write number
	// seq, mock id's base, and drops the writes it holds; the writes after
	// it stay. data.Bytes holds the base (data.File is not taken over).
	// A compaction that another made since (a base of seq or later
	// exists), or of live data reset since, changes nothing. EINVALID
	// when seq is past the live data's number.
	Compact(ctx context.Context, id string, seq int64, data Data) error
	// ResetLive drops mock id's writes and base: its live data is its
	// current version's again (§12.2 reset), under a number of its own,
	// and its Version changes. A mock whose live data is its current
	// version's already is returned unchanged. Replacing a mock's data
	// (ReplaceMockData, a restore, a template run) does the same.
	ResetLive(ctx context.Context, id string) (*Mock, error)
}

// WriteAnnouncement starts the announcements (Invalidator) that a mock's
// live data changed: it is followed by the mock's id, a ':' and the
// number of its last write. A replica that has the mock applies the writes
// it lacks, rather than loading the mock again.
const WriteAnnouncement = "write:"

// CheckWrite refuses a write no store keeps: an unknown Op, a Seq below 1,
// a negative size of the live data (EINVALID). Both stores' AppendWrite
// start with it.
func CheckWrite(w *Write, size int64) error {
	switch {
	case w.Op != WriteCreate && w.Op != WriteReplace && w.Op != WriteUpdate && w.Op != WriteDelete:
		return Errorf(EINVALID, "Unknown write operation %q", w.Op)
	case w.Seq < 1:
		return Errorf(EINVALID, "A write's number is 1 or more")
	case size < 0:
		return Errorf(EINVALID, "The live data's size is 0 or more")
	}
	return nil
}

// ErrLiveChanged is a store's ECONFLICT for a write, compaction or snapshot
// computed on live data that has moved on to number seq.
func ErrLiveChanged(seq int64) error {
	return Errorf(ECONFLICT, "The live data changed: it is at number %d", seq)
}

// ErrLogFull is a store's EUNAVAILABLE for a write to a mock whose log
// holds n writes after its base, its bound, until a compaction.
func ErrLogFull(n int64) error {
	return Errorf(EUNAVAILABLE, "The mock's log holds %d writes waiting for a compaction; try again later", n)
}
