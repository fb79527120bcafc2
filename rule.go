package decoy

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Rules (§13.1 of the contract): a route's answers that depend on the
// request. They are tried in order after the token, rate limit and quota
// checks; the first whose When holds answers instead of the route's
// normal answer.

// Faults a rule may answer with: the connection reset with nothing
// answered, closed with no answer, or a head announcing more body than is
// sent, then closed.
const (
	FaultReset     = "reset"
	FaultEmpty     = "empty"
	FaultMalformed = "malformed"
)

// MaxRules is the most rules a route holds.
const MaxRules = 100

// MaxRulesBytes bounds the rules of a route as stored (EncodeRules): a
// project's routes are held in memory whole, their rules with them.
const MaxRulesBytes = 64 << 10

// Rule is one of a route's conditional answers.
type Rule struct {
	// Name names the rule in the journal and in errors; may be empty.
	Name string `json:"name"`
	// When is conditions in the filters syntax of §1.3, decoded form
	// ("method=POST&header.x-mode=slow"), over the request: method,
	// path.<param>, query.<name>, header.<name> (lower case), body.<path>.
	// Empty: always holds.
	When string `json:"when"`
	// Status is the answer's status; nil: 200 with Body or Template, else
	// the route's normal answer's.
	Status *int `json:"status"`
	// Headers are set on the answer.
	Headers map[string]string `json:"headers"`
	// DelayMS delays the answer, as a mock's delay does (0–MaxDelayMS).
	DelayMS int `json:"delay_ms"`
	// Body, when set, is the answer's JSON body, sent as is. Template, when
	// set, is a template (§7) run for each request, which may read
	// request.path.X, request.query.X, request.header.X and request.body.X.
	// Neither: the route's normal body.
	Body     json.RawMessage `json:"body"`
	Template json.RawMessage `json:"template"`
	// Fault, when not empty, is one of the Fault constants: the rule
	// answers with it and nothing else.
	Fault string `json:"fault"`
	// Times, when set, is the most matching requests the rule holds for,
	// counted across replicas; then it is skipped.
	Times *int64 `json:"times"`
}

// RuleCounter counts the requests each rule with Times held for, across
// replicas (Redis when shared, else the store), so that a rule holds for
// at most Times of them.
type RuleCounter interface {
	// TakeRule counts one more request for rule index of route, when
	// fewer than times were counted, and reports whether it was.
	TakeRule(ctx context.Context, routeID string, index int, times int64) (bool, error)
	// ResetRules starts the counts of the rules of each route named again,
	// in one round trip to a shared counter (a deletion resets every
	// route it took with it).
	ResetRules(ctx context.Context, routeIDs ...string) error
}

// Journal (§13.2): every request a project answers through its routes, and
// every read of its mocks at /mock/{id}, is recorded, bounded per project.

// JournalEntry is one request as the journal keeps it. Secrets are
// REDACTED and bodies cut before an entry is made.
type JournalEntry struct {
	ID      string            `json:"id"`
	At      time.Time         `json:"at"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// BodyCut is set when the body was longer than MaxJournalBody and cut.
	BodyCut bool   `json:"body_cut,omitempty"`
	RouteID string `json:"route_id"`
	MockID  string `json:"mock_id"`
	// Rule is the name (else the index) of the rule that answered, or "".
	Rule       string  `json:"rule"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	Client     string  `json:"client"`
	// Forwarded is set for a request passed to the project's upstream
	// (§14).
	Forwarded bool `json:"forwarded,omitempty"`
}

// MaxJournalBody is the most bytes of a body an entry keeps.
const MaxJournalBody = 64 << 10

// DefaultJournalSize is the most entries a project's journal keeps unless
// --journal-size says otherwise.
const DefaultJournalSize = 1000

// JournalFilter narrows a listing of the journal; empty fields do not.
type JournalFilter struct {
	Method string
	// Path matches an entry's path exactly, or as a prefix when it ends
	// with '*'.
	Path   string
	Status int
	Since  time.Time
}

// Matches reports whether e passes f: the same method (in any letter
// case), the same path or one under a prefix ending in '*', the same
// status, at Since or later.
func (f JournalFilter) Matches(e *JournalEntry) bool {
	switch {
	case f.Method != "" && !strings.EqualFold(f.Method, e.Method),
		f.Status != 0 && f.Status != e.Status,
		!f.Since.IsZero() && e.At.Before(f.Since):
		return false
	case f.Path == "":
		return true
	}
	if prefix, ok := strings.CutSuffix(f.Path, "*"); ok {
		return strings.HasPrefix(e.Path, prefix)
	}
	return e.Path == f.Path
}

// JournalStore keeps the entries of projects' journals, at most a bound
// of them per project, the oldest leaving first: in the memory of one
// server, or in a store that replicas share. An entry's ID, given by the
// store, orders the entries of a project (see ParseJournalID).
type JournalStore interface {
	// Append adds entries, by project and oldest first, each as its
	// record (JournalEntry.AppendRecord, JournalRecord), and gives them
	// IDs. EUNAVAILABLE when the store cannot take them. It keeps nothing
	// of batch, its slices nor the records, which the caller uses again.
	Append(ctx context.Context, batch map[string][][]byte) error
	// List returns up to limit entries of a project that pass f, newest
	// first, from after cursor ("" for the first page), and the cursor
	// of the next page ("" on the last). EINVALID for a cursor the store
	// did not give.
	List(ctx context.Context, projectID string, f JournalFilter, cursor string, limit int) ([]*JournalEntry, string, error)
	// Count counts a project's entries that pass f.
	Count(ctx context.Context, projectID string, f JournalFilter) (int64, error)
	// After returns up to limit entries of a project newer than the
	// entry id, oldest first ("0-0": from the oldest). EINVALID for an id
	// that is not one.
	After(ctx context.Context, projectID, id string, limit int) ([]*JournalEntry, error)
	// Clear empties a project's journal.
	Clear(ctx context.Context, projectID string) error
}

// ParseJournalID reads an entry ID, "<milliseconds>-<sequence>" as Redis
// Streams write theirs.
func ParseJournalID(id string) (ms, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	var err error
	if ms, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, false
	}
	if seq, err = strconv.ParseUint(b, 10, 64); err != nil {
		return 0, 0, false
	}
	return ms, seq, true
}

// Journal keeps projects' journals.
type Journal interface {
	// Record adds an entry to a project's journal. It never blocks the
	// answer: entries are written in batches, and dropped (and counted)
	// when the journal's backend cannot take them.
	Record(projectID string, e *JournalEntry)
	// List returns up to limit entries of a project, newest first, after
	// cursor ("" for the first page), and the next page's cursor.
	List(ctx context.Context, projectID string, f JournalFilter, cursor string, limit int) ([]*JournalEntry, string, error)
	// Count counts a project's entries that pass f.
	Count(ctx context.Context, projectID string, f JournalFilter) (int64, error)
	// Clear empties a project's journal.
	Clear(ctx context.Context, projectID string) error
}

// EncodeRules is the JSON of rules as a store keeps them: [] for none;
// bodies and templates compact, their characters as sent (no HTML
// escaping), so that a body is answered as it was given.
func EncodeRules(rules []Rule) ([]byte, error) {
	if rules == nil {
		rules = []Rule{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rules); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// DecodeRules reads rules a store kept (EncodeRules); none is an empty
// slice, never nil.
func DecodeRules(data []byte) ([]Rule, error) {
	rules := []Rule{}
	if len(data) == 0 {
		return rules, nil
	}
	if err := json.Unmarshal(data, &rules); err != nil {
		return nil, err
	}
	if rules == nil {
		rules = []Rule{}
	}
	for i := range rules {
		// A null body or template is none (json.RawMessage keeps "null").
		if string(rules[i].Body) == "null" {
			rules[i].Body = nil
		}
		if string(rules[i].Template) == "null" {
			rules[i].Template = nil
		}
	}
	return rules, nil
}
