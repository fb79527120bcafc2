package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Log lines are written in batches, as nginx's access_log buffer= does:
// one write(2) per access-log line was a third of the system calls of a
// small read. Lines of level Warn and above are written at once, with
// everything before them, so that what explains a crash is never left in
// the buffer; others wait at most logFlushInterval.
const (
	logBufferSize    = 32 << 10
	logFlushInterval = 200 * time.Millisecond
)

// logWriter buffers what is written to it and writes it out when the
// buffer fills, when Flush is called, and every logFlushInterval while it
// runs.
type logWriter struct {
	mu  sync.Mutex
	out io.Writer
	buf []byte
}

func newLogWriter(out io.Writer) *logWriter {
	return &logWriter{out: out, buf: make([]byte, 0, logBufferSize)}
}

// Write implements io.Writer. slog writes each record in one call.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > cap(w.buf) {
		w.flushLocked()
	}
	if len(p) > cap(w.buf) {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Flush writes out what is buffered.
func (w *logWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *logWriter) flushLocked() {
	if len(w.buf) > 0 {
		_, _ = w.out.Write(w.buf) // nowhere to report a failure to log
		w.buf = w.buf[:0]
	}
}

// Run flushes every logFlushInterval until ctx ends, then once more.
func (w *logWriter) Run(ctx context.Context) {
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			w.Flush()
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// flushingHandler writes out the buffer after each record of level Warn or
// above.
type flushingHandler struct {
	slog.Handler
	w *logWriter
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.w.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.w}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.w}
}
