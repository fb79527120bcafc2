package decoy

import (
	"testing"
	"time"
)

// Month writes YYYY-MM of the UTC month, as time.Format does.
func TestMonth(t *testing.T) {
	paris := time.FixedZone("Paris", 3600)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2027, 1, 1, 0, 30, 0, 0, paris), // still December in UTC
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 9, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		if got, want := Month(tm), tm.UTC().Format("2006-01"); got != want {
			t.Errorf("Month(%v) = %q, want %q", tm, got, want)
		}
	}
}
