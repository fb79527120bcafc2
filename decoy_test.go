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

func TestCanonicalID(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc33", "0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc33", true},
		{"0B6C5F0E-3C1A-4D5E-9F00-AA11BB22CC33", "0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc33", true},
		{"0b6c5f0e3c1a4d5e9f00aa11bb22cc33", "", false},              // no dashes
		{"{0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc33}", "", false},        // braces
		{"urn:uuid:0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc33", "", false}, // a URN
		{"0b6c5f0e-3c1a-4d5e-9f00-aa11bb22cc3g", "", false},          // not hex
		{"", "", false},
	} {
		got, ok := CanonicalID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CanonicalID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// A rate limit stored before MaxRateLimit bounded it counts as the bound:
// a limiter's window for it holds at most that many requests.
func TestEffectiveRateLimitBounded(t *testing.T) {
	for _, c := range []struct {
		set  *int64
		def  int64
		want int64
	}{
		{nil, 100, 100},
		{i64p(0), 100, 0},
		{i64p(MaxRateLimit), 100, MaxRateLimit},
		{i64p(MaxRateLimit + 1), 100, MaxRateLimit},
		{i64p(1 << 62), 100, MaxRateLimit},
	} {
		m := &Mock{RateLimit: c.set}
		if got := m.EffectiveRateLimit(c.def); got != c.want {
			t.Errorf("EffectiveRateLimit with %v, default %d: %d, want %d", c.set, c.def, got, c.want)
		}
	}
}

func i64p(n int64) *int64 { return &n }

// A body that is not UTF-8 is refused with where its first bad byte is:
// its line and its column in bytes, a valid U+FFFD and multi-byte
// characters before it passed over.
func TestNotUTF8(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"\xff", "byte 0xFF at line 1, column 1 is not"},
		{`{"a":"` + "\xfe" + `"}`, "byte 0xFE at line 1, column 7 is not"},
		{"{\n  \"name\": \"é\uFFFD\xc3\"\n}", "byte 0xC3 at line 2, column 17 is not"},
		{"[\r\n1,\n2,\"\xed\xa0\x80\"]", "byte 0xED at line 3, column 4 is not"},
	} {
		err := NotUTF8([]byte(c.body))
		if want := "The body must be UTF-8: " + c.want; err == nil || err.Error() != want || ErrorCode(err) != EINVALID {
			t.Errorf("NotUTF8(%q) = %v, want %q", c.body, err, want)
		}
	}
	if err := NotUTF8([]byte(`{"a":1}`)); err == nil || err.Error() != "The body must be UTF-8" {
		t.Errorf("NotUTF8 of a valid body = %v", err)
	}
}
