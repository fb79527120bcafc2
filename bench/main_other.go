//go:build !linux

// Command bench is Decoy's side-by-side load benchmark. It measures servers
// through /proc and installs nginx with apt-get, so it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "bench: runs on Linux only (it reads /proc and installs nginx with apt-get)")
	os.Exit(2)
}
