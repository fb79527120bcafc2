//go:build !linux

package testservice

import "io"

// goCommandOutput is the go command's standard output where it can be
// found (on Linux, through /proc); elsewhere nil, and the line of skips
// shows on the terminal, or with -v.
func goCommandOutput() io.WriteCloser { return nil }
