//go:build !linux

package testservice

import "io"

// goCommandOutput is the go command's standard output where it can be
// found (on Linux, through /proc); elsewhere nil, and the line of skips
// shows on the terminal, or with -v.
func goCommandOutput() io.WriteCloser { return nil }

// parentGo finds the go command through /proc, on Linux: elsewhere each
// package says its own skips.
func parentGo() (goCommand, bool) { return goCommand{}, false }

func children(int) []int { return nil }

func settle(int) {}

func running(int, string) bool { return true }
