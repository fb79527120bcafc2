// Package decoy is the vocabulary of the Decoy mock-data server: the mock, its
// settings and usage, the error codes, and the small interfaces the HTTP
// server needs from its backends (Store, QuotaCounter, Limiter, Invalidator).
//
// Backends live in their own packages (sqlite, inmem, ...) and never import
// each other; cmd/decoy wires them together.
package decoy

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Limits and defaults fixed by the contract.
const (
	// MaxDelayMS is the largest response delay a mock may have.
	MaxDelayMS = 30000

	// DefaultRateLimit is the default number of requests a mock admits in
	// any sliding 60-second window.
	DefaultRateLimit = 100

	// DefaultMonthlyQuota is the default number of served responses a mock
	// gives per calendar month (UTC).
	DefaultMonthlyQuota = 50000

	// RateWindow is the length of the sliding rate-limit window.
	RateWindow = time.Minute

	// MaxNameLength is the longest mock name accepted, in bytes.
	MaxNameLength = 200
)

// Mock is one mock API: its identity, how it is served, and a summary of its
// stored data. The data itself is read and written through the Store.
type Mock struct {
	// ID is a lowercase UUID.
	ID   string `json:"id"`
	Name string `json:"name"`

	// WorkspaceID and ProjectID place the mock (§6.1). A mock created
	// with an empty ProjectID goes to DefaultProjectID; the store fills in
	// WorkspaceID from the project.
	WorkspaceID string `json:"workspace_id"`
	ProjectID   string `json:"project_id"`

	// Private mocks require a token. Only its SHA-256 hash is kept.
	Private   bool   `json:"private"`
	TokenHash []byte `json:"-"`

	// ContentType is the media type the data was stored with; it is sent
	// back as is.
	ContentType string `json:"content_type"`

	// Status is the HTTP status a successful read answers with (200-599).
	Status int `json:"status"`

	// DelayMS delays every successful read (0-MaxDelayMS).
	DelayMS int `json:"delay_ms"`

	// RateLimit and MonthlyQuota override the server defaults when not nil.
	// Zero means unlimited.
	RateLimit    *int64 `json:"rate_limit"`
	MonthlyQuota *int64 `json:"monthly_quota"`

	// Size and ETag describe the stored data: its length in bytes and the
	// strong entity tag of the data returned unchanged.
	Size int64  `json:"size"`
	ETag string `json:"etag"`

	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// Version increases with every change to the mock or its data, so that
	// a stale copy can be told from a fresh one.
	Version int64 `json:"-"`

	// TemplateMode is the mode of the mock's template (TemplateOnce,
	// TemplateAlways), or "" when it has none. See TemplateStore.
	TemplateMode string `json:"-"`

	// LiveSeq is the number of the mock's live data (§12): of its last
	// write through its routes, or of the last reset of its live data (0:
	// neither yet). See LiveStore.
	LiveSeq int64 `json:"-"`
}

// MaxRateLimit bounds every rate limit: a mock's, --rate-limit,
// --client-rate-limit and --auth-failure-limit. A limiter keeps each
// request it admitted in the last minute, so one key holds at most this
// many (about 16 MB in memory, more in Redis). Past it, no limit (0) is
// what a caller means.
const MaxRateLimit = 1_000_000

// CheckRateLimit refuses a rate limit below 0 or past MaxRateLimit
// (EINVALID, naming what).
func CheckRateLimit(what string, n int64) error {
	if n < 0 || n > MaxRateLimit {
		return Errorf(EINVALID, "%s must be an integer from 0 to %d (0: unlimited)", what, MaxRateLimit)
	}
	return nil
}

// EffectiveRateLimit returns the mock's rate limit, or def when the mock uses
// the server default; a limit stored before MaxRateLimit bounded it counts
// as MaxRateLimit.
func (m *Mock) EffectiveRateLimit(def int64) int64 {
	if m.RateLimit != nil {
		return min(*m.RateLimit, MaxRateLimit)
	}
	return def
}

// EffectiveMonthlyQuota returns the mock's monthly quota, or def when the mock
// uses the server default.
func (m *Mock) EffectiveMonthlyQuota(def int64) int64 {
	if m.MonthlyQuota != nil {
		return *m.MonthlyQuota
	}
	return def
}

// MockUpdate is a change to a mock's settings. Nil fields are left alone.
type MockUpdate struct {
	Name    *string
	Private *bool
	Status  *int
	DelayMS *int

	// RateLimit and MonthlyQuota, when set, replace the override; a nil
	// Value returns the mock to the server default.
	RateLimit    *LimitUpdate
	MonthlyQuota *LimitUpdate

	// TokenHash, when set, replaces the token hash (nil clears it).
	TokenHash *[]byte
}

// LimitUpdate is the new value of a limit override; nil means "use the
// server default".
type LimitUpdate struct {
	Value *int64
}

// MockData is a mock's new data and how to serve it.
type MockData struct {
	ContentType string
	Data        Data
	ETag        string
	// IfLiveSeq, when set, makes the replace a snapshot of the live data
	// numbered so (§12.2: POST …/versions): ECONFLICT when the mock's live
	// data has moved on since (a write or a reset came in between), and
	// nothing changes.
	IfLiveSeq *int64
}

// Data is a mock's document, handed between the server and a store.
//
// Given to a store (CreateMock, ReplaceMockData), Bytes holds the document,
// and File, when not nil, is a file holding the same bytes from its start:
// a store that keeps documents in files may take it over, moving it into
// its own folder, rather than write a copy. The caller still closes it (a
// move does not disturb an open file).
//
// Returned by a store (FindMockData), exactly one is set: File, open at the
// document's first byte for the caller to read and close, or Bytes.
type Data struct {
	Bytes []byte
	File  *os.File
}

// Usage is how much of its limits a mock has used.
type Usage struct {
	Minute MinuteUsage `json:"minute"`
	Month  MonthUsage  `json:"month"`
}

// MinuteUsage counts requests in the current sliding 60-second window.
// Limit 0 means unlimited.
type MinuteUsage struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"`
}

// MonthUsage counts served responses in the current UTC calendar month.
// Limit 0 means unlimited.
type MonthUsage struct {
	Used     int64     `json:"used"`
	Limit    int64     `json:"limit"`
	ResetsAt time.Time `json:"resets_at"`
}

// Month returns the UTC calendar month of t as "YYYY-MM", the key under
// which quota counts are kept.
func Month(t time.Time) string {
	y, m, _ := t.UTC().Date()
	if y < 0 || y > 9999 {
		return t.UTC().Format("2006-01")
	}
	// Every read asks for its month: written out rather than formatted.
	b := [7]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-', byte('0' + m/10), byte('0' + m%10)}
	return string(b[:])
}

// MonthsKept is how many months of quota counts a store keeps, the
// newest it counted included: only the current month's is read, and the
// one before stays for a replica whose clock is a little behind.
const MonthsKept = 2

// OldestKeptMonth returns the oldest month whose counts a store keeps once
// it counted one in month ("YYYY-MM"): counts of months before it are
// deleted. A month it cannot read keeps everything ("").
func OldestKeptMonth(month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return ""
	}
	return Month(t.AddDate(0, 1-MonthsKept, 0))
}

// MonthEnd returns the start of the UTC calendar month after the one t is in.
func MonthEnd(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

// Store keeps mocks, their data and the server's own secrets.
type Store interface {
	// CreateMock stores a new mock with its data. m.ID must be set; the
	// store sets Size, CreatedAt, UpdatedAt and Version. Returns ECONFLICT
	// when the id is taken.
	CreateMock(ctx context.Context, m *Mock, data Data) (*Mock, error)

	// FindMock returns a mock without its data. Returns ENOTFOUND.
	FindMock(ctx context.Context, id string) (*Mock, error)

	// FindMockData returns a mock and its stored data. Returns ENOTFOUND.
	FindMockData(ctx context.Context, id string) (*Mock, Data, error)

	// ListMocks returns up to limit mocks in creation order, starting after
	// cursor ("" for the first page), and the cursor of the next page ("" on
	// the last one). Returns EINVALID for a malformed cursor.
	ListMocks(ctx context.Context, cursor string, limit int) ([]*Mock, string, error)

	// UpdateMock applies upd to a mock. Returns ENOTFOUND.
	UpdateMock(ctx context.Context, id string, upd MockUpdate) (*Mock, error)

	// ReplaceMockData replaces a mock's data. Returns ENOTFOUND.
	ReplaceMockData(ctx context.Context, id string, data MockData) (*Mock, error)

	// DeleteMock deletes a mock, its data and its counts. Returns ENOTFOUND.
	DeleteMock(ctx context.Context, id string) error

	// AdminTokenHash returns the stored hash of the generated admin token,
	// or nil when none was generated yet.
	AdminTokenHash(ctx context.Context) ([]byte, error)

	// SetAdminTokenHash stores the hash of a generated admin token, unless
	// one is stored already (another replica generated it first): then it
	// returns ECONFLICT and keeps the stored one.
	SetAdminTokenHash(ctx context.Context, hash []byte) error

	// ResetAdminTokenHash stores the hash of a new generated admin token
	// in place of the one stored, or as the first (decoy admin-token
	// reset, for a token that was lost).
	ResetAdminTokenHash(ctx context.Context, hash []byte) error

	// Ping reports whether the store can serve requests. An ENOSPACE
	// error says in its message, as a clause ("the data directory's file
	// system is full"), what has no room: /readyz shows it.
	Ping(ctx context.Context) error
}

// QuotaCounter counts served responses per mock and calendar month, durably
// and exactly under concurrency. It counts the reads of a workspace's mocks
// (its monthly_reads limit, §6.2) the same way, under the workspace's id:
// an id is a mock's or a workspace's, and the counts of either go when it
// is deleted.
type QuotaCounter interface {
	// ReserveQuota counts one served response of mock (or workspace) id in
	// month when fewer than limit were counted (limit 0: always). It
	// returns the count after the call and whether the response may be
	// served. Returns ENOTFOUND when id is neither a mock's nor a
	// workspace's.
	ReserveQuota(ctx context.Context, id, month string, limit int64) (used int64, ok bool, err error)

	// ReleaseQuota takes back a reservation whose response was not served.
	ReleaseQuota(ctx context.Context, id, month string) error

	// QuotaUsed returns the count of mock (or workspace) id in month.
	QuotaUsed(ctx context.Context, id, month string) (int64, error)
}

// Limiter admits events per key in a sliding window of RateWindow, exactly
// under concurrency.
type Limiter interface {
	// Allow admits one event for key when fewer than limit were admitted in
	// the window ending now (limit must be positive).
	Allow(ctx context.Context, key string, limit int64) (RateResult, error)

	// Peek reports the state of key as Allow would see it, admitting nothing.
	Peek(ctx context.Context, key string, limit int64) (RateResult, error)

	// Undo takes back an event that Allow admitted, as if it never came.
	Undo(ctx context.Context, key string, r RateResult) error
}

// Invalidator carries "this mock changed" announcements between replicas
// that share a store, so that each drops its cached copy of the mock.
type Invalidator interface {
	// Invalidate announces to every listening replica that mock id changed.
	// Returns EUNAVAILABLE when the announcement could not be sent.
	Invalidate(ctx context.Context, id string) error
	// Listen delivers announcements to h until ctx ends, reconnecting as
	// needed. Until it calls h.Listening, and from each h.Lost until the
	// next h.Listening, announcements may be missed.
	Listen(ctx context.Context, h InvalidationHandler)
}

// InvalidationHandler receives what an Invalidator hears. Its methods are
// called from one goroutine, in order.
type InvalidationHandler interface {
	// Listening is called once every announcement sent from now on will be
	// delivered.
	Listening()
	// Lost is called when announcements may be missed from now on.
	Lost(err error)
	// Invalidated is called for each announcement.
	Invalidated(id string)
}

// RateResult is the answer of a Limiter. Its fields map onto the
// X-RateLimit-* and Retry-After response headers.
type RateResult struct {
	Allowed bool
	Limit   int64

	// Used counts the events in the window, including this one if admitted.
	Used int64

	// Remaining is what is left in the window after this event.
	Remaining int64

	// Reset is the time until the oldest counted event leaves the window
	// (zero when the window is empty).
	Reset time.Duration

	// RetryAfter is, when not allowed, the time until a slot frees.
	RetryAfter time.Duration

	// Event identifies the admitted event, for Undo.
	Event int64
}

// SeedID returns the id of the mock seeded from NAME.json: the UUIDv5 of NAME
// in the URL namespace, so its URL stays the same across restarts.
func SeedID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(name)).String()
}

// RateKey is the key under which a Limiter counts the reads of mock id.
func RateKey(id string) string { return "mock:" + id }

// CanonicalID reads an id: a UUID in its 8-4-4-4-12 form, in any letter
// case, returned in lowercase as the stores keep it.
func CanonicalID(v string) (string, bool) {
	if len(v) != 36 {
		return "", false
	}
	u, err := uuid.Parse(v)
	if err != nil {
		return "", false
	}
	if strings.ToLower(v) == v { // the usual, canonical form: no copy
		return v, true
	}
	return u.String(), true
}
