package jsondoc

import (
	"bytes"
	"math/big"
	"strconv"
	"unsafe"
)

// Decimal is a JSON number in a form that compares exactly by numeric value,
// whatever its spelling (30, 30.0 and 3e1 are equal) and however many digits
// it has.
type Decimal struct {
	// Value is sign × 0.d × 10^exp, where d is the concatenation of the
	// significant digits d1 and d2: no leading or trailing zeros. Zero has
	// no digits.
	neg    bool
	d1, d2 []byte
	exp    int64
	// bigExp holds exp instead when it does not fit comfortably in an
	// int64 (exponents of 16 digits or more); such numbers are rare, and
	// exactness matters more than speed for them.
	bigExp *big.Int

	// f holds the value as a float64 when that is exact enough to order
	// and compare by (at most 15 significant digits, modest exponent).
	f      float64
	fexact bool
}

// ParseNumber parses text in JSON number syntax. It reports false for any
// other text (+1, .5, 0x1E, NaN, 1., 01).
func ParseNumber(text []byte) (Decimal, bool) {
	var n Decimal
	i := 0
	if i < len(text) && text[i] == '-' {
		n.neg = true
		i++
	}
	intStart := i
	switch {
	case i < len(text) && text[i] == '0':
		i++
	case i < len(text) && text[i] >= '1' && text[i] <= '9':
		for i < len(text) && isDigit(text[i]) {
			i++
		}
	default:
		return Decimal{}, false
	}
	ip := text[intStart:i]
	var fp []byte
	if i < len(text) && text[i] == '.' {
		i++
		s := i
		for i < len(text) && isDigit(text[i]) {
			i++
		}
		if i == s {
			return Decimal{}, false
		}
		fp = text[s:i]
	}
	var e int64
	var edigits []byte // the exponent's digits, when too long for e
	eneg := false
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			eneg = text[i] == '-'
			i++
		}
		s := i
		for i < len(text) && isDigit(text[i]) {
			i++
		}
		if i == s {
			return Decimal{}, false
		}
		digits := bytes.TrimLeft(text[s:i], "0")
		if len(digits) > 15 {
			edigits = digits
		} else {
			for _, c := range digits {
				e = e*10 + int64(c-'0')
			}
			if eneg {
				e = -e
			}
		}
	}
	if i != len(text) {
		return Decimal{}, false
	}

	// Normalise: drop leading zeros (the integer part is "0" or has none),
	// then trailing zeros.
	if ip[0] == '0' {
		lz := 0
		for lz < len(fp) && fp[lz] == '0' {
			lz++
		}
		n.d2 = fp[lz:]
		n.exp = e - int64(lz)
	} else {
		n.d1, n.d2 = ip, fp
		n.exp = int64(len(ip)) + e
	}
	n.d2 = bytes.TrimRight(n.d2, "0")
	if len(n.d2) == 0 {
		n.d1 = bytes.TrimRight(n.d1, "0")
	}
	if len(n.d1)+len(n.d2) == 0 {
		return Decimal{fexact: true}, true // zero, whatever its exponent
	}
	if edigits != nil {
		// exp so far is the digit adjustment alone (e was 0).
		be, _ := new(big.Int).SetString(string(edigits), 10)
		if eneg {
			be.Neg(be)
		}
		n.bigExp = be.Add(be, big.NewInt(n.exp))
		n.exp = 0
		return n, true
	}
	if len(n.d1)+len(n.d2) <= 15 && n.exp > -290 && n.exp < 290 {
		// With at most 15 significant digits, distinct decimals are distinct
		// float64s, and rounding keeps their order.
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
		if err == nil {
			n.f, n.fexact = f, true
		}
	}
	return n, true
}

// AppendKey appends to dst a key of n's numeric value: two decimals have the
// same key exactly when CompareDecimal says they are equal.
func (n Decimal) AppendKey(dst []byte) []byte {
	if n.IsZero() {
		return append(dst, '0')
	}
	if n.neg {
		dst = append(dst, '-')
	}
	dst = append(dst, n.d1...)
	dst = append(dst, n.d2...)
	dst = append(dst, 'e')
	if n.bigExp != nil {
		return n.bigExp.Append(dst, 10)
	}
	return strconv.AppendInt(dst, n.exp, 10)
}

// IsZero reports whether n is zero (0, -0, 0.0e5 ...).
// Float returns the number as a float64, and whether that is exact enough
// to order and compare it by (as CompareDecimal does when both are).
func (n Decimal) Float() (float64, bool) { return n.f, n.fexact }

// IsZero reports whether the number is zero.
func (n Decimal) IsZero() bool { return len(n.d1)+len(n.d2) == 0 }

// CompareDecimal returns -1, 0 or +1 as a is less than, equal to or greater than b
// by numeric value.
func CompareDecimal(a, b Decimal) int {
	if a.fexact && b.fexact {
		switch {
		case a.f < b.f:
			return -1
		case a.f > b.f:
			return 1
		}
		return 0
	}
	az, bz := a.IsZero(), b.IsZero()
	switch {
	case az && bz:
		return 0
	case az:
		return sign(!b.neg, -1)
	case bz:
		return sign(!a.neg, 1)
	case a.neg != b.neg:
		if a.neg {
			return -1
		}
		return 1
	}
	c := compareMagnitude(a, b)
	if a.neg {
		return -c
	}
	return c
}

// sign returns s when pos holds and -s otherwise.
func sign(pos bool, s int) int {
	if pos {
		return s
	}
	return -s
}

func compareMagnitude(a, b Decimal) int {
	if a.bigExp != nil || b.bigExp != nil {
		if c := a.exponent().Cmp(b.exponent()); c != 0 {
			return c
		}
	} else {
		switch {
		case a.exp < b.exp:
			return -1
		case a.exp > b.exp:
			return 1
		}
	}
	la, lb := len(a.d1)+len(a.d2), len(b.d1)+len(b.d2)
	for k := 0; k < la && k < lb; k++ {
		x, y := a.digit(k), b.digit(k)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	// The longer one has more non-zero digits after a common prefix.
	switch {
	case la < lb:
		return -1
	case la > lb:
		return 1
	}
	return 0
}

func (n *Decimal) exponent() *big.Int {
	if n.bigExp != nil {
		return n.bigExp
	}
	return big.NewInt(n.exp)
}

func (n *Decimal) digit(k int) byte {
	if k < len(n.d1) {
		return n.d1[k]
	}
	return n.d2[k-len(n.d1)]
}
