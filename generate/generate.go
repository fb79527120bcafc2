// Package generate makes mock data from a template: JSON with $repeat and
// {{ expression }} strings that call fake-data functions, or a JSON Schema.
// A template is compiled once (Parse, ParseSchema) and then run with a seed
// (Template.Run) as often as wanted: the same seed gives the same bytes.
//
// Running is bounded: the output may not pass Limits.MaxBytes, and the run
// stops at Limits.Deadline, checked while it writes. A template comes from
// the user, so nothing it holds makes the package panic or loop for ever.
// It knows bytes, not HTTP: SeedHeader is only the name under which every
// part of the server reads and sends a seed.
package generate

import (
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
	// size is the template's length, and outSize the length of its last
	// output: the output buffer starts at the larger, so that a run
	// allocates about its output once rather than growing to it.
	size    int
	outSize atomic.Int64
}

// Limits bound one run.
type Limits struct {
	// MaxBytes is the largest output allowed (0: no bound).
	MaxBytes int
	// Deadline, when not zero, ends a run that is still writing then.
	Deadline time.Time
}

// Parse compiles a JSON template, or a JSON Schema when contentType is
// SchemaContentType (parameters aside). A bad template is an EINVALID
// error whose message starts with where it is, as a JSON path ("$.items.name:
// unknown function \"nmae\"").
func Parse(contentType string, body []byte) (*Template, error) {
	if IsSchema(contentType) {
		return ParseSchema(body)
	}
	return ParseTemplate(body)
}

// Run generates the template's output for seed: JSON text, the same for the
// same seed. It fails with an EINVALID error when the output would pass
// lim.MaxBytes or the run passes lim.Deadline.
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

// AppendRun is Run, appending the output to dst.
func (t *Template) AppendRun(dst []byte, seed uint64, lim Limits) (out []byte, err error) {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	g := &gen{
		buf:      dst,
		start:    len(dst),
		max:      lim.MaxBytes,
		deadline: lim.Deadline,
		src:      src,
		f:        gofakeit.NewFaker(src, false),
	}
	defer func() {
		// The fake-data library is not ours: whatever it does, a run
		// ends in an error, not a crash.
		if r := recover(); r != nil {
			out, err = dst, decoy.Errorf(decoy.EINVALID, "The template could not be run: %v", r)
		}
	}()
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

// NewLimits returns the bounds of a run that starts now: at most maxBytes
// of output (at most 1 TiB), for timeout (0 or less: DefaultTimeout).
func NewLimits(maxBytes int64, timeout time.Duration) Limits {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return Limits{MaxBytes: int(min(maxBytes, 1<<40)), Deadline: time.Now().Add(timeout)}
}

// gen is the state of one run.
type gen struct {
	buf      []byte
	start    int
	max      int
	deadline time.Time
	f        *gofakeit.Faker
	// src is f's source of random numbers, called directly where the
	// draws are made here (the same draws gofakeit would make).
	src *rand.PCG
	// index is the position in the innermost $repeat.
	index int
	// steps counts checks, so that the clock is read every few of them.
	steps int
	// depth is the nesting of schema $refs being generated.
	depth int
}

// check fails when the output passed its bound or the run its deadline.
// Every loop calls it once per element, so a run ends soon after either.
func (g *gen) check() error {
	if err := g.checkSize(); err != nil {
		return err
	}
	g.steps++
	if g.steps&63 == 0 && !g.deadline.IsZero() && time.Now().After(g.deadline) {
		return errDeadline
	}
	return nil
}

func (g *gen) checkSize() error {
	if g.max > 0 && len(g.buf)-g.start > g.max {
		return decoy.Errorf(decoy.EINVALID, "Generated data larger than %d bytes (--max-data-bytes)", g.max)
	}
	return nil
}

var errDeadline = decoy.Errorf(decoy.EINVALID, "Generating the data took too long: make the template smaller")

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
