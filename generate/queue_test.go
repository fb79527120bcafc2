package generate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/generate"
)

// TestQueue: Workers generations run at once and Waiting more wait, in
// order; past the queue, and past the wait, ErrBusy; a waiter whose
// request ends leaves with ErrCanceled; a turn's bound starts with it.
func TestQueue(t *testing.T) {
	ctx := context.Background()
	q := generate.NewQueue(generate.QueueConfig{Workers: 1, Waiting: 1, Timeout: time.Minute, MaxBytes: 10})
	lim, end, err := q.Start(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if lim.MaxBytes != 10 || time.Until(lim.Deadline) < 50*time.Second || lim.Done != nil {
		t.Errorf("limits of a turn: %+v", lim)
	}

	// The one place in the queue taken, by a request that then leaves.
	leaving, leave := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, _, err := q.Start(leaving, 0)
		waited <- err
	}()
	for q.Waiting() == 0 {
		time.Sleep(time.Millisecond) // until the goroutine waits: a state, not a window
	}
	if _, _, err := q.Start(ctx, 0); !errors.Is(err, generate.ErrBusy) {
		t.Errorf("past the queue: %v, want ErrBusy at once", err)
	}
	leave()
	if err := <-waited; !errors.Is(err, generate.ErrCanceled) {
		t.Errorf("a waiter whose request ended: %v, want ErrCanceled", err)
	}

	// A waiter gets the turn once it is given back.
	got := make(chan func(), 1)
	go func() {
		_, end, err := q.Start(ctx, time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- end
	}()
	for q.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	end()
	(<-got)()

	// Nobody gives the turn back within the queue's timeout: ErrBusy.
	q = generate.NewQueue(generate.QueueConfig{Workers: 1, Timeout: 10 * time.Millisecond})
	_, end, _ = q.Start(ctx, 0)
	defer end()
	if _, _, err := q.Start(ctx, 0); !errors.Is(err, generate.ErrBusy) {
		t.Errorf("no turn within the timeout: %v, want ErrBusy", err)
	}
	if q.RetryAfter() != 10*time.Millisecond {
		t.Errorf("RetryAfter %v", q.RetryAfter())
	}
}
