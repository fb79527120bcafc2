package server

import "testing"

// Compactions come every 2,000 writes, or on large data as many more as
// keep the whole data's rewrite near 2 KiB a write, doubling up to 16,000;
// each turn of a longer interval is a turn of every shorter one.
func TestCompactEvery(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{0, 2000}, {1 << 20, 2000}, {4_000_000, 2000}, {4_200_000, 4000},
		{12_000_000, 8000}, {26_000_000, 16000}, {1 << 40, 16000},
	} {
		if got := compactEvery(tc.size); got != tc.want {
			t.Errorf("compactEvery(%d) = %d, want %d", tc.size, got, tc.want)
		}
		if n := compactEvery(tc.size); n%compactAfter != 0 || maxCompactAfter%n != 0 {
			t.Errorf("compactEvery(%d) = %d: not a turn of %d, or %d not one of it", tc.size, n, compactAfter, maxCompactAfter)
		}
	}
}
