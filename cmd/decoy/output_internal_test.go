package main

import (
	"bytes"
	"strings"
	"testing"
)

// A page's footer offers --all only where the command has it (it did on
// every paged table, and decoy requests --all is an unknown flag).
func TestFooterOffersAllWhereThereIsOne(t *testing.T) {
	page := map[string]any{"mocks": []map[string]any{{"name": "users", "id": "x"}}, "next_cursor": "c2"}
	for _, all := range []bool{false, true} {
		var buf bytes.Buffer
		o := &output{w: &buf, format: "table", all: all}
		if err := o.list(page, "mocks", mockColumns, "none"); err != nil {
			t.Fatal(err)
		}
		want := "More: add --cursor c2\n"
		if all {
			want = "More: add --cursor c2 (or --all)\n"
		}
		if got := buf.String(); !strings.HasSuffix(got, want) {
			t.Errorf("all %v: %q, want it to end %q", all, got, want)
		}
	}
}
