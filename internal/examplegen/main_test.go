package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesAreGenerated fails when examples/ differs from what the
// generator writes: regenerate with go run ./internal/examplegen -out examples.
func TestExamplesAreGenerated(t *testing.T) {
	for name, want := range Generate() {
		got, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s is stale; run go run ./internal/examplegen -out examples", name)
		}
	}
}
