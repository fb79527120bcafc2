package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is an io.Writer that counts its writes.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// Lines below Warn wait in the buffer until it fills or is flushed; a Warn
// line goes out at once, with everything before it; Run flushes when it
// ends.
func TestLogWriter(t *testing.T) {
	out := &lockedBuffer{}
	w := newLogWriter(out)
	log := slog.New(flushingHandler{slog.NewTextHandler(w, nil), w})
	log.Info("request", "n", 1)
	log.Info("request", "n", 2)
	if out.String() != "" {
		t.Fatalf("info lines written at once: %q", out)
	}
	log.Warn("something went wrong")
	if s := out.String(); !strings.Contains(s, "n=1") || !strings.Contains(s, "n=2") || !strings.Contains(s, "something went wrong") || out.writes != 1 {
		t.Fatalf("after a warning, %d writes: %q", out.writes, s)
	}
	for i := range logBufferSize / 20 {
		log.Info("request", "i", i)
	}
	if out.writes < 2 {
		t.Error("a full buffer was not written out")
	}
	before := out.writes
	log.Info("last")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Run(ctx)
	if !strings.Contains(out.String(), "msg=last") || out.writes != before+1 {
		t.Errorf("Run did not flush at its end: %d writes", out.writes-before)
	}
	big := strings.Repeat("x", 2*logBufferSize)
	log.Info(big)
	if !strings.Contains(out.String(), big) {
		t.Error("a line larger than the buffer was kept back")
	}
}
