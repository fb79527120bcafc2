package server

import "testing"

// acceptsGzip reads Accept-Encoding as RFC 9110 §12.5.3 says: gzip or
// x-gzip named in any letter case, or "*", with a q-value above zero; a
// q of zero for gzip refuses it over a "*".
func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{" Gzip ", true},
		{"x-gzip", true},
		{"gzip, deflate, br, zstd", true},
		{"br, gzip", true},
		{"deflate, br", false},
		{"identity", false},
		{"gzip;q=0", false},
		{"gzip ; Q = 0", false},
		{"gzip;q=0.000", false},
		{"gzip;q=0.5", true},
		{"gzip;level=1;q=0", false},
		{"gzip;q=bad", true},
		{"*", true},
		{"*;q=0", false},
		{"*;q=0, gzip", true},
		{"gzip;q=0, *", false},
		{"br, *;q=0.1", true},
		{",,gzip", true},
		{"gzipx", false},
	} {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// Reading Accept-Encoding allocates nothing.
func TestAcceptsGzipAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { acceptsGzip("gzip, deflate, br, zstd") }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
