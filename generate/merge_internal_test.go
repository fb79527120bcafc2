package generate

import (
	"strings"
	"testing"
)

// TestLongTypeListsMerge: two type lists of 200,000 names each, in an
// allOf, are intersected in one pass: the compile's work, counted in the
// units its bound counts, grows with the names (compared in pairs, as they
// were, it took 4·10^10 units, half a minute). Counted, not timed, so that
// a busy machine does not fail it.
func TestLongTypeListsMerge(t *testing.T) {
	const n = 200000
	schema := `{"allOf":[{"type":[` + strings.Repeat(`"null",`, n) + `"null"]},` +
		`{"type":[` + strings.Repeat(`"string",`, n) + `"null"]}]}`
	c := newSchemaCompiler(Limits{})
	tp, err := c.parse([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tp.Run(1, Limits{}); err != nil || string(out) != "null" {
		t.Errorf("%s %v, want null", out, err)
	}
	if units := c.bound.checks * checkEvery; units > 50*n {
		t.Errorf("about %d units of work for %d names, want at most %d", units, 2*n, 50*n)
	}
	t.Logf("about %d units of work for %d names", c.bound.checks*checkEvery, 2*n)
}
