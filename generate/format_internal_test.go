package generate

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendDecimal: numbers rounded to d decimals are written as
// strconv.AppendFloat's shortest form writes them, digit for digit.
func TestAppendDecimal(t *testing.T) {
	for d := range pow10 {
		if pow10[d] != math.Pow(10, float64(d)) {
			t.Errorf("pow10[%d] = %v, math.Pow gives %v", d, pow10[d], math.Pow(10, float64(d)))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2_000_000; i++ {
		d := r.IntN(len(pow10))
		var k int64
		switch i % 3 {
		case 0:
			k = r.Int64N(1e15)
		case 1:
			k = r.Int64N(1e6)
		default:
			k = r.Int64N(1 << uint(r.IntN(50)+1))
		}
		if i%2 == 0 {
			k = -k
		}
		if k == 0 {
			continue
		}
		x := float64(k) / pow10[d]
		want := strconv.AppendFloat(nil, x, 'f', -1, 64)
		if got := appendDecimal(nil, k, d); string(got) != string(want) {
			t.Fatalf("%d/10^%d: %s, AppendFloat writes %s", k, d, got, want)
		}
	}
}
