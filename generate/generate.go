// Package generate makes mock data from a template: JSON with $repeat and
// {{ expression }} strings that call fake-data functions, or a JSON Schema.
// A template is compiled once (Parse, ParseSchema) and then run with a seed
// (Template.Run) as often as wanted: the same seed gives the same bytes.
//
// Compiling and running are bounded: the output may not pass
// Limits.MaxBytes, and both stop at Limits.Deadline or once Limits.Done is
// closed (the client left), checked every few steps of every loop, the
// merging of a schema's allOf included. A template comes from the user, so
// nothing it holds makes the package panic or loop for ever. Queue bounds
// how many compile and run at once on a server, and how many wait.
// It knows bytes, not HTTP: SeedHeader is only the name under which every
// part of the server reads and sends a seed.
package generate

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/decoy-mock/decoy"
)

// Template kinds, by the content type a template is sent with.
const (
	// SchemaContentType marks a template that is a JSON Schema.
	SchemaContentType = "application/schema+json"
)

// maxDepth bounds the nesting of a template (and of the output a schema's
// $ref may recurse into), as jsondoc bounds stored documents.
const maxDepth = 64

// Template is a compiled template, safe for concurrent use: it is never
// changed once made.
type Template struct {
	root node
	// reads are the request paths a rule's template reads (see
	// ParseRequestTemplate).
	reads [][]string
	// size is the template's length, and outSize the length of its last
	// output: the output buffer starts at the larger, so that a run
	// allocates about its output once rather than growing to it.
	size    int
	outSize atomic.Int64
}

// Limits bound one compile or run (or both: a request that compiles a
// template and runs it gives both the same Limits).
type Limits struct {
	// MaxBytes is the largest output allowed (0: no bound). Compiling
	// does not read it.
	MaxBytes int
	// Deadline, when not zero, ends a compile or run still going then,
	// with an EINVALID error (the template is too slow).
	Deadline time.Time
	// Done, when not nil, ends a compile or run once it is closed, with
	// ErrCanceled: a request's Context().Done(), so that the work stops
	// when the client leaves.
	Done <-chan struct{}
}

// Parse compiles a JSON template, or a JSON Schema when contentType is
// SchemaContentType (parameters aside), within lim (its Deadline and
// Done). A bad template is an EINVALID error whose message starts with
// where it is, as a JSON path ("$.items.name: unknown function \"nmae\"").
func Parse(contentType string, body []byte, lim Limits) (*Template, error) {
	if IsSchema(contentType) {
		return ParseSchema(body, lim)
	}
	return ParseTemplate(body, lim)
}

// Run generates the template's output for seed: JSON text, the same for the
// same seed. It fails with an EINVALID error when the output would pass
// lim.MaxBytes or the run passes lim.Deadline, and with ErrCanceled once
// lim.Done is closed.
func (t *Template) Run(seed uint64, lim Limits) ([]byte, error) {
	last := int(t.outSize.Load())
	hint := max(t.size, last+last/8, 512)
	if lim.MaxBytes > 0 {
		hint = min(hint, lim.MaxBytes+1)
	}
	out, err := t.AppendRun(make([]byte, 0, min(hint, 64<<20)), seed, lim)
	if err == nil {
		t.outSize.Store(int64(len(out)))
	}
	return out, err
}

// Request is the request a rule's template runs for (§13.1): what
// {{ request.<path> }} reads.
type Request interface {
	// Lookup returns the JSON text of the value path reaches in the
	// request seen as one JSON object ({"method":…, "path":{…},
	// "query":{…}, "header":{…}, "body":…}; path split on '.'), the first
	// when it reaches several, or false when it reaches none.
	Lookup(path []string) ([]byte, bool)
}

// RequestReads returns the request paths the template reads, each split
// on '.' ("path.id" is ["path", "id"]), in the order they appear; none
// for a template that is not a rule's. The caller must not change them.
func (t *Template) RequestReads() [][]string { return t.reads }

// RunRequest is Run for a rule's template, whose request expressions read
// req. A value the request lacks is null where an expression is a whole
// string, and nothing within text.
func (t *Template) RunRequest(seed uint64, lim Limits, req Request) ([]byte, error) {
	return t.appendRun(make([]byte, 0, max(t.size, 512)), seed, lim, req)
}

// AppendRun is Run, appending the output to dst.
func (t *Template) AppendRun(dst []byte, seed uint64, lim Limits) (out []byte, err error) {
	return t.appendRun(dst, seed, lim, nil)
}

func (t *Template) appendRun(dst []byte, seed uint64, lim Limits, req Request) (out []byte, err error) {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	g := &gen{
		req:   req,
		buf:   dst,
		start: len(dst),
		max:   lim.MaxBytes,
		bound: newBound(lim),
		src:   src,
		f:     gofakeit.NewFaker(src, false),
	}
	defer func() {
		// The fake-data library is not ours: whatever it does, a run
		// ends in an error, not a crash.
		if r := recover(); r != nil {
			out, err = dst, decoy.Errorf(decoy.EINVALID, "The template could not be run: %v", r)
		}
	}()
	// A run that starts past its bound ends at once, however small.
	if err := g.bound.check(); err != nil {
		return dst, err
	}
	if err := t.root.gen(g); err != nil {
		return dst, err
	}
	if err := g.checkSize(); err != nil {
		return dst, err
	}
	return g.buf, nil
}

// NewSeed returns a random seed: below 2^53, so that JavaScript reads it
// exactly.
func NewSeed() uint64 { return rand.Uint64N(1 << 53) }

// SeedHeader carries the seed of generated data over HTTP: sent back with
// every answer of generated data, and sent by a client to have the same
// data again.
const SeedHeader = "Decoy-Seed"

// ParseSeed reads a seed as a client sends it, in decimal; "" gives a new
// random seed (NewSeed).
func ParseSeed(v string) (uint64, error) {
	if v == "" {
		return NewSeed(), nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, decoy.Errorf(decoy.EINVALID, "%s must be an integer from 0 to %d", SeedHeader, uint64(1<<64-1))
	}
	return n, nil
}

// DefaultTimeout is the time one run gets when its server sets none.
const DefaultTimeout = 2 * time.Second

// NewLimits returns the bounds of a compile and run for ctx that start
// now: at most maxBytes of output (at most 1 TiB), for timeout (0 or less:
// DefaultTimeout), and no longer than ctx.
func NewLimits(ctx context.Context, maxBytes int64, timeout time.Duration) Limits {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return Limits{MaxBytes: int(min(maxBytes, 1<<40)), Deadline: time.Now().Add(timeout), Done: ctx.Done()}
}

// gen is the state of one run.
type gen struct {
	buf   []byte
	start int
	max   int
	bound bound
	f     *gofakeit.Faker
	// src is f's source of random numbers, called directly where the
	// draws are made here (the same draws gofakeit would make).
	src *rand.PCG
	// index is the position in the innermost $repeat.
	index int
	// depth is the nesting of schema $refs being generated.
	depth int
	// req is the request a rule's template answers; nil for others.
	req Request
}

// check fails when the output passed its bound, or the run its deadline
// or its request. Every loop calls it once per element, so a run ends
// soon after any of them.
func (g *gen) check() error {
	if g.max > 0 && len(g.buf)-g.start > g.max {
		return g.tooLarge()
	}
	return g.bound.tick(runStep)
}

func (g *gen) checkSize() error {
	if g.max > 0 && len(g.buf)-g.start > g.max {
		return g.tooLarge()
	}
	return nil
}

func (g *gen) tooLarge() error {
	return decoy.Errorf(decoy.EINVALID, "Generated data larger than %d bytes (--max-data-bytes)", g.max)
}

var errDeadline = decoy.Errorf(decoy.EINVALID, "Generating the data took too long: make the template smaller")

// ErrCanceled ends a compile or run whose Limits.Done was closed: the
// request it was for has ended, so nobody reads the answer. It is the
// server's doing, not the template's (EUNAVAILABLE).
var ErrCanceled = decoy.Errorf(decoy.EUNAVAILABLE, "Generating the data stopped: the request ended")

// bound is the time bound of one compile or run: its deadline and its
// request's Done, looked at every checkEvery units of work rather than at
// every step, so that checking costs next to nothing. A unit is about one
// comparison of two keys; each loop counts the units of its step, so that
// no stretch of work between two looks is long, whatever the template.
// Once passed, it stays passed: every later tick fails at once, so nested
// loops unwind fast.
type bound struct {
	deadline time.Time
	done     <-chan struct{}
	units    int
	checks   int // how many times it looked: the work done, in checkEvery units
	err      error
}

// Units of work: the clock and Done are looked at every checkEvery of
// them; a step of a run (an element written, with the fake data it calls
// for) counts runStep, so that a run looks every 64 elements.
const (
	checkEvery = 1 << 10
	runStep    = 16
)

func newBound(lim Limits) bound { return bound{deadline: lim.Deadline, done: lim.Done} }

// tick counts n units of work, and fails once the bound has passed. It is
// called in every loop: small enough to be inlined.
func (b *bound) tick(n int) error {
	if b.units += n; b.units < checkEvery {
		return b.err
	}
	b.units = 0
	return b.check()
}

// check fails when the bound has passed.
func (b *bound) check() error {
	b.checks++
	if b.err != nil {
		return b.err
	}
	select {
	case <-b.done: // a nil done is never ready
		b.err = ErrCanceled
	default:
		if !b.deadline.IsZero() && time.Now().After(b.deadline) {
			b.err = errDeadline
		}
	}
	return b.err
}

// stopped reports whether the bound has passed, as last looked at.
func (b *bound) stopped() bool { return b.err != nil }

// intRange returns an integer from lo to hi, both included (lo <= hi).
func (g *gen) intRange(lo, hi int64) int64 {
	span := uint64(hi) - uint64(lo)
	if span == ^uint64(0) {
		return int64(g.src.Uint64())
	}
	return lo + int64(g.src.Uint64()%(span+1)) // bias below 2^-40 for spans that matter
}

// intN returns an integer from 0 to n-1 (n > 0), drawn as gofakeit's IntN
// draws it on 64-bit machines.
func (g *gen) intN(n int) int {
	un := uint64(n)
	if un&(un-1) == 0 {
		return int(g.src.Uint64() & (un - 1))
	}
	hi, lo := bits.Mul64(g.src.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(g.src.Uint64(), un)
		}
	}
	return int(hi)
}

// float64Range returns a number from lo to hi, drawn as gofakeit's
// Float64Range draws it.
func (g *gen) float64Range(lo, hi float64) float64 {
	if lo == hi {
		return lo
	}
	v := float64(g.src.Uint64()<<11>>11) / (1 << 53)
	if math.IsInf(hi-lo, 0) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
		return lo*(1-v) + hi*v
	}
	return v*(hi-lo) + lo
}

// node is a compiled part of a template: it appends its output.
type node interface {
	gen(g *gen) error
}

// literal is output that does not change: constant JSON.
type literal []byte

func (l literal) gen(g *gen) error {
	g.buf = append(g.buf, l...)
	return nil
}
