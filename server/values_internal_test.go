package server

import (
	"net/http"
	"testing"
)

// Values handed out from one array stay apart: adding to one header
// leaves the next as it was, and past the array's end each is its own.
func TestValuesApart(t *testing.T) {
	h := http.Header{}
	vs := make(values, 2)
	h["A"] = vs.one("a")
	h["B"] = vs.one("b")
	h["C"] = vs.one("c") // past the array
	h.Add("A", "a2")
	h.Add("C", "c2")
	for key, want := range map[string][]string{"A": {"a", "a2"}, "B": {"b"}, "C": {"c", "c2"}} {
		if got := h[key]; len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if len(vs) != 0 {
		t.Errorf("%d values left, want 0", len(vs))
	}
}
