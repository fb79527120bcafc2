package generate

import (
	"context"
	"runtime"
	"time"

	"github.com/decoy-mock/decoy"
)

// Queue bounds the generation a server does at once. A generation (its
// template compiled if need be, and run) takes a turn: at most Workers
// hold one at a time, as many as the cores by default, so that a run has
// about a core to itself and its time bound, which starts with the turn,
// measures the template rather than the load. Up to Waiting more wait
// their turn, in order, each for at most Timeout; past either, Start fails
// with ErrBusy, which a server answers 503 with Retry-After.
type Queue struct {
	turns    chan struct{}
	waiting  chan struct{}
	timeout  time.Duration
	maxBytes int64
}

// QueueConfig is the configuration of a Queue.
type QueueConfig struct {
	// Workers is the most generations running at once (0:
	// runtime.GOMAXPROCS(0)).
	Workers int
	// Waiting is the most generations waiting for a turn (0: 8 ×
	// Workers).
	Waiting int
	// Timeout bounds a generation from the start of its turn, and the
	// wait for a turn (0 or less: DefaultTimeout).
	Timeout time.Duration
	// MaxBytes bounds the output of a run (0: no bound).
	MaxBytes int64
}

// NewQueue returns a Queue for c.
func NewQueue(c QueueConfig) *Queue {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Waiting <= 0 {
		c.Waiting = 8 * c.Workers
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return &Queue{turns: make(chan struct{}, c.Workers), waiting: make(chan struct{}, c.Waiting), timeout: c.Timeout, maxBytes: c.MaxBytes}
}

// ErrBusy refuses a generation that found no turn: the queue was full, or
// no turn freed within the queue's Timeout. It is the server's load, not
// the template's fault (EUNAVAILABLE): the same request may pass later
// (see RetryAfter).
var ErrBusy = decoy.Errorf(decoy.EUNAVAILABLE, "The server is busy generating data for other requests; try again shortly")

// Start waits for a turn for ctx, and returns the Limits of a compile and
// run that start now: the queue's MaxBytes, a deadline of run from now (0
// or less: the queue's Timeout), and ctx's Done. end gives the turn back;
// it is never nil, and is called once, when the generation is done. It
// fails with ErrBusy when no turn is to be had in time, and with
// ErrCanceled when ctx ends first.
func (q *Queue) Start(ctx context.Context, run time.Duration) (lim Limits, end func(), err error) {
	select {
	case q.turns <- struct{}{}:
	default:
		if err := q.wait(ctx); err != nil {
			return Limits{}, func() {}, err
		}
	}
	if run <= 0 {
		run = q.timeout
	}
	return NewLimits(ctx, q.maxBytes, run), func() { <-q.turns }, nil
}

// wait waits for a turn, in a place in the queue if one is free.
func (q *Queue) wait(ctx context.Context) error {
	select {
	case q.waiting <- struct{}{}:
	default:
		return ErrBusy
	}
	defer func() { <-q.waiting }()
	t := time.NewTimer(q.timeout)
	defer t.Stop()
	select {
	case q.turns <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ErrCanceled
	case <-t.C:
		return ErrBusy
	}
}

// RetryAfter is how long a request refused with ErrBusy had better wait:
// every turn taken ends within Timeout.
func (q *Queue) RetryAfter() time.Duration { return q.timeout }

// Waiting returns how many generations wait for a turn.
func (q *Queue) Waiting() int { return len(q.waiting) }
