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
	// Seq numbers the mock's writes: 1 for the first after its current
	// version's data, one more for each after.
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
	// Seq is the number of the mock's last write (0: none since its
	// current version).
	Seq int64
	// BaseSeq is the number of the last write its base holds (0: the base
	// is the current version's data).
	BaseSeq int64
	// Size is the live data's size in bytes, as the writes left it.
	Size int64
}

// LiveStore keeps mocks' live data: their logs of writes and their bases.
// Both stores implement it; storetest holds them to one behaviour.
type LiveStore interface {
	// AppendWrite appends w to mock id's log as write number w.Seq, when
	// the mock's last write is number w.Seq-1: else ECONFLICT (another
	// writer, on this replica or another, wrote first: the caller catches
	// up and tries again). size is the live data's size once w is
	// applied; a write that grows a workspace past its max_bytes is
	// LimitError("max_bytes"). The write is durable when AppendWrite
	// returns. ENOTFOUND when the mock is gone.
	AppendWrite(ctx context.Context, id string, w *Write, size int64) error
	// Writes returns mock id's writes numbered after seq, in order, at
	// most limit of them.
	Writes(ctx context.Context, id string, after int64, limit int) ([]*Write, error)
	// Live returns where mock id's live data stands.
	Live(ctx context.Context, id string) (LiveState, error)
	// LiveBase returns mock id's base, when a compaction wrote one (ok
	// false: the base is the current version's data), and the number of
	// the last write it holds.
	LiveBase(ctx context.Context, id string) (data Data, seq int64, ok bool, err error)
	// Compact makes data, the live data as it stands after write number
	// seq, mock id's base, and drops the writes it holds; the writes after
	// it stay. A compaction that another made since (a base of seq or
	// later exists) changes nothing.
	Compact(ctx context.Context, id string, seq int64, data Data) error
	// ResetLive drops mock id's writes and base: its live data is its
	// current version's again (§12.2 reset). Replacing a mock's data
	// (ReplaceMockData, a restore, a template run) does the same.
	ResetLive(ctx context.Context, id string) (*Mock, error)
}

// WriteAnnouncement starts the announcements (Invalidator) that a mock's
// live data changed: it is followed by the mock's id, a ':' and the
// number of its last write. A replica that has the mock applies the writes
// it lacks, rather than loading the mock again.
const WriteAnnouncement = "write:"
