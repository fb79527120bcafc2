package generate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/brianvoe/gofakeit/v7"
)

// Function is a function a template expression may call.
type Function struct {
	Name        string `json:"name"`
	Category    string `json:"category"`
	Description string `json:"description"`
	Args        []Arg  `json:"args"`
	// Returns is the JSON type of the result: string, integer, number,
	// boolean, or any (choice: the type of the value chosen).
	Returns string `json:"returns"`
	// Example is a template string that calls the function, and Output
	// what it gave for one seed.
	Example string          `json:"example"`
	Output  json.RawMessage `json:"output"`

	// run gives the function's value; a holds every argument, the
	// defaults filled in, as prepare left them.
	run func(g *gen, a []value) value
	// text, set for a function that gives a string, appends the string
	// to b, escaped for the inside of a JSON string, rather than making
	// it (run is then made from it).
	text func(g *gen, b []byte, a []value) []byte
	// num, set for a function that gives a number, appends its JSON
	// text (run is then made from it).
	num func(g *gen, b []byte, a []value) []byte
	// prepare checks the arguments when a call is compiled and may turn
	// them into what run uses (dates into Unix seconds).
	prepare func(a []value) ([]value, error)
}

// Arg is an argument of a Function.
type Arg struct {
	Name string `json:"name"`
	// Type is integer, number, string or any.
	Type        string `json:"type"`
	Description string `json:"description"`
	// Default is the value of an optional argument left out.
	Default any `json:"default,omitempty"`
	// Variadic is set on a last argument that may repeat (one or more).
	Variadic bool `json:"variadic,omitempty"`
}

// compileArgs checks the arguments of a call when it is compiled: count
// and types, then the function's own rules; it returns them with the
// defaults filled in, as run takes them.
func (fn *Function) compileArgs(a []value) ([]value, error) {
	required := 0
	for _, arg := range fn.Args {
		if arg.Default == nil {
			required++
		}
	}
	variadic := len(fn.Args) > 0 && fn.Args[len(fn.Args)-1].Variadic
	if len(a) < required || (!variadic && len(a) > len(fn.Args)) {
		return nil, fmt.Errorf("%s takes %s, not %d", fn.Name, fn.arity(), len(a))
	}
	for i, v := range a {
		arg := fn.Args[min(i, len(fn.Args)-1)]
		ok := arg.Type == "any" || (arg.Type == "string" && v.kind == 's') ||
			(arg.Type == "integer" && v.kind == 'i') || (arg.Type == "number" && (v.kind == 'i' || v.kind == 'f'))
		if !ok && arg.Type == "integer" && v.kind == 'f' && math.Abs(v.f) >= 1<<63 && v.f == math.Trunc(v.f) && !math.IsInf(v.f, 0) {
			// Written as an integer, but too large to be one (a
			// walkthrough read "must be an integer" of 99999999999999999999).
			return nil, fmt.Errorf("%s: %s must be an integer from %d to %d", fn.Name, arg.Name, math.MinInt64, math.MaxInt64)
		}
		if !ok {
			return nil, fmt.Errorf("%s: %s must be %s", fn.Name, arg.Name, article(arg.Type))
		}
	}
	for i := len(a); i < len(fn.Args) && !fn.Args[i].Variadic; i++ {
		a = append(a, defaultValue(fn.Args[i].Default))
	}
	if fn.prepare != nil {
		return fn.prepare(a)
	}
	return a, nil
}

func article(t string) string {
	if t == "integer" {
		return "an integer"
	}
	return "a " + t
}

// arity describes how many arguments fn takes.
func (fn *Function) arity() string {
	n, opt := 0, 0
	for _, a := range fn.Args {
		if a.Variadic {
			return "one or more arguments"
		}
		if a.Default != nil {
			opt++
		} else {
			n++
		}
	}
	switch {
	case n+opt == 0:
		return "no arguments"
	case opt == 0:
		return fmt.Sprintf("%d arguments", n)
	}
	return fmt.Sprintf("%d to %d arguments", n, n+opt)
}

// defaultValue is the value of an argument's default.
func defaultValue(d any) value {
	switch d := d.(type) {
	case int:
		return integer(int64(d))
	case float64:
		return number(d)
	case string:
		return str(d)
	}
	return value{kind: 'n'}
}

// Functions returns every function templates may call, by category and
// name, with the output of its example.
func Functions() []Function {
	functionsOnce.Do(func() {
		for _, fn := range functionList {
			t, err := ParseTemplate([]byte(`{"$repeat":1,"$item":`+string(appendString(nil, fn.Example))+`}`), Limits{})
			if err != nil {
				panic("generate: example of " + fn.Name + ": " + err.Error())
			}
			out, err := t.Run(7, Limits{})
			if err != nil {
				panic("generate: example of " + fn.Name + ": " + err.Error())
			}
			fn.Output = json.RawMessage(out[1 : len(out)-1])
			functionsDone = append(functionsDone, *fn)
		}
	})
	return functionsDone
}

var (
	functionsOnce sync.Once
	functionsDone []Function
)

// registry is the functions by name.
var registry = map[string]*Function{}

func init() {
	for _, fn := range functionList {
		switch {
		case fn.run != nil:
		case fn.text != nil:
			fn.run = fn.runText
		case fn.num != nil:
			fn.run = fn.runNum
		}
		registry[fn.Name] = fn
	}
}

// text makes a function of no arguments that gives a string.
func text(category, name, desc string, f func(*gofakeit.Faker) string) *Function {
	return &Function{Name: name, Category: category, Description: desc, Returns: "string", Example: "{{ " + name + " }}",
		run: func(g *gen, _ []value) value { return str(f(g.f)) }}
}

// dateLayout is the layout of date arguments and results.
const dateLayout = "2006-01-02"

// Default bounds of dates: fixed, so that a seed gives the same dates
// whenever it runs.
var (
	defaultFrom = "2000-01-01"
	defaultTo   = "2030-12-31"
)

// prepareDates checks the from and to arguments of a date function and
// turns them into the first and last second of the range, as integers.
func prepareDates(a []value) ([]value, error) {
	f, err1 := time.Parse(dateLayout, a[0].s)
	t, err2 := time.Parse(dateLayout, a[1].s)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("dates are written YYYY-MM-DD")
	}
	if t.Before(f) {
		return nil, fmt.Errorf("from %s is after to %s", a[0].s, a[1].s)
	}
	return []value{integer(f.Unix()), integer(t.Unix() + 86399)}, nil
}

// randomTime returns a time, to the second, from a[0] to a[1] (Unix
// seconds, as prepareDates made them).
func randomTime(g *gen, a []value) time.Time {
	return time.Unix(g.intRange(a[0].i, a[1].i), 0).UTC()
}

// defaultDates are the default range of dates, prepared.
var defaultDates, _ = prepareDates([]value{str(defaultFrom), str(defaultTo)})

// checkRange checks that min is not above max.
func checkRange(a []value) ([]value, error) {
	if a[0].asFloat() > a[1].asFloat() {
		return nil, fmt.Errorf("min is greater than max")
	}
	return a, nil
}

// pow10 are the powers of ten a number is rounded with (decimals are 0
// to 15).
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// round rounds f to d decimals.
func round(f float64, d int64) float64 {
	r, _ := roundK(f, d)
	return r
}

// roundK rounds f to d decimals: r is k/10^d, k an integer (0 when r is
// not worked out so, as for f out of range).
func roundK(f float64, d int64) (r, k float64) {
	p := math.Pow(10, float64(d))
	if d >= 0 && d < int64(len(pow10)) {
		p = pow10[d]
	}
	k = math.Round(f * p)
	if r = k / p; !math.IsInf(r, 0) && !math.IsNaN(r) {
		return r, k
	}
	return f, 0
}

// appendFloatIn appends a number from lo to hi, rounded to d decimals and
// kept in the range, as strconv.AppendFloat(x, 'f', -1, 64) writes it, without its search for the shortest digits
// when x is k/10^d with k of at most 15 digits: those digits are k's (no
// shorter decimal rounds to the same float64, since two decimals of 15
// significant digits or fewer never do).
func appendFloatIn(b []byte, g *gen, lo, hi float64, d int64) []byte {
	x, k := roundK(g.float64Range(lo, hi), d)
	if x < lo || x > hi || k == 0 || math.Abs(k) >= 1e15 || d < 0 || d >= int64(len(pow10)) {
		return number(min(max(x, lo), hi)).appendText(b)
	}
	return appendDecimal(b, int64(k), int(d))
}

// appendDecimal appends k/10^d in the fewest digits (k not 0).
func appendDecimal(b []byte, k int64, d int) []byte {
	if k < 0 {
		b = append(b, '-')
		k = -k
	}
	p := int64(pow10[d])
	b = strconv.AppendInt(b, k/p, 10)
	frac := k % p
	if frac == 0 {
		return b
	}
	for frac%10 == 0 {
		frac /= 10
		d--
	}
	b = append(b, '.')
	for i := d - 1; i >= 0; i-- {
		b = append(b, byte('0'+frac/int64(pow10[i])%10))
	}
	return b
}

var dateArgs = []Arg{
	{Name: "from", Type: "string", Description: "earliest date, YYYY-MM-DD", Default: defaultFrom},
	{Name: "to", Type: "string", Description: "latest date, YYYY-MM-DD", Default: defaultTo},
}

// functionList is every function, in the order listed.
var functionList = []*Function{
	// Numbers and choices.
	{Name: "number", Category: "numbers", Description: "An integer from min to max, both included.", Returns: "integer",
		Args:    []Arg{{Name: "min", Type: "integer", Default: 0}, {Name: "max", Type: "integer", Default: 1000}},
		Example: "{{ number 18 80 }}", prepare: checkRange,
		run: func(g *gen, a []value) value { return integer(g.intRange(a[0].i, a[1].i)) }},
	{Name: "float", Category: "numbers", Description: "A number from min to max, rounded to decimals.", Returns: "number",
		Args:    []Arg{{Name: "min", Type: "number", Default: 0}, {Name: "max", Type: "number", Default: 1}, {Name: "decimals", Type: "integer", Default: 2}},
		Example: "{{ float 0 5 1 }}",
		prepare: func(a []value) ([]value, error) {
			if a[2].i < 0 || a[2].i > 15 {
				return nil, fmt.Errorf("float: decimals must be from 0 to 15")
			}
			return checkRange(a)
		},
		num: func(g *gen, b []byte, a []value) []byte {
			return appendFloatIn(b, g, a[0].asFloat(), a[1].asFloat(), a[2].i)
		}},
	{Name: "price", Category: "numbers", Description: "A price from min to max, with cents.", Returns: "number",
		Args:    []Arg{{Name: "min", Type: "number", Default: 1}, {Name: "max", Type: "number", Default: 1000}},
		Example: "{{ price 5 250 }}", prepare: checkRange,
		num: func(g *gen, b []byte, a []value) []byte {
			return appendFloatIn(b, g, a[0].asFloat(), a[1].asFloat(), 2)
		}},
	{Name: "boolean", Category: "numbers", Description: "true or false.", Returns: "boolean", Example: "{{ boolean }}",
		run: func(g *gen, _ []value) value { return boolean(g.f.Bool()) }},
	{Name: "choice", Category: "numbers", Description: "One of the values given, with its own type.", Returns: "any",
		Args:    []Arg{{Name: "values", Type: "any", Variadic: true}},
		Example: `{{ choice "pending" "paid" "shipped" }}`,
		run:     func(g *gen, a []value) value { return a[g.intRange(0, int64(len(a)-1))] }},
	{Name: "index", Category: "numbers", Description: "The position of the item in the innermost $repeat, from 0.", Returns: "integer",
		Example: "{{ index }}",
		run:     func(g *gen, _ []value) value { return integer(int64(g.index)) }},
	{Name: "uuid", Category: "numbers", Description: "A random UUID (version 4).", Returns: "string", Example: "{{ uuid }}",
		run: func(g *gen, _ []value) value { return str(g.f.UUID()) }},

	// People.
	appending("person", "name", "A full name.", func(g *gen, b []byte, _ []value) []byte {
		return g.appendWord(append(g.appendWord(b, firstNames), ' '), lastNames)
	}),
	words("person", "firstName", "A first name.", firstNames),
	words("person", "lastName", "A last name.", lastNames),
	appending("person", "email", "An email address.", func(g *gen, b []byte, _ []value) []byte { return g.appendEmail(b) }),
	text("person", "username", "A user name.", (*gofakeit.Faker).Username),
	appending("person", "phone", "A phone number, digits only.", func(g *gen, b []byte, _ []value) []byte { return g.appendDigits(b, "##########", true) }),
	text("person", "gender", "A gender.", (*gofakeit.Faker).Gender),
	words("person", "jobTitle", "A job title.", jobTitles),

	// Addresses.
	text("address", "street", "A street address.", (*gofakeit.Faker).Street),
	words("address", "city", "A city.", cities),
	words("address", "state", "A US state.", states),
	appending("address", "zip", "A postal code.", func(g *gen, b []byte, _ []value) []byte { return g.appendDigits(b, g.pick(zips), zips.plain) }),
	words("address", "country", "A country.", countries),
	words("address", "countryCode", "A two-letter country code.", countryCodes),
	{Name: "latitude", Category: "address", Description: "A latitude, 6 decimals.", Returns: "number", Example: "{{ latitude }}",
		num: func(g *gen, b []byte, _ []value) []byte { return appendFloatIn(b, g, -90, 90, 6) }},
	{Name: "longitude", Category: "address", Description: "A longitude, 6 decimals.", Returns: "number", Example: "{{ longitude }}",
		num: func(g *gen, b []byte, _ []value) []byte { return appendFloatIn(b, g, -180, 180, 6) }},

	// Companies and products.
	words("company", "company", "A company name.", companies),
	text("company", "buzzword", "A business buzzword.", (*gofakeit.Faker).BuzzWord),
	text("company", "slogan", "A company slogan.", (*gofakeit.Faker).Slogan),
	text("company", "productName", "A product name.", (*gofakeit.Faker).ProductName),
	words("company", "productCategory", "A product category.", categories),
	text("company", "productDescription", "A product description.", (*gofakeit.Faker).ProductDescription),
	words("company", "color", "A color name.", colors),
	text("company", "hexColor", "A color as #rrggbb.", (*gofakeit.Faker).HexColor),
	words("company", "currency", "A currency code.", currencies),

	// Internet.
	text("internet", "url", "A URL.", (*gofakeit.Faker).URL),
	text("internet", "domain", "A domain name.", (*gofakeit.Faker).DomainName),
	text("internet", "ipv4", "An IPv4 address.", (*gofakeit.Faker).IPv4Address),
	text("internet", "ipv6", "An IPv6 address.", (*gofakeit.Faker).IPv6Address),
	text("internet", "userAgent", "A browser user agent.", (*gofakeit.Faker).UserAgent),

	// Dates.
	{Name: "date", Category: "dates", Description: "A date, YYYY-MM-DD, from from to to.", Returns: "string",
		Args: dateArgs, Example: `{{ date "2024-01-01" "2024-12-31" }}`, prepare: prepareDates,
		text: func(g *gen, b []byte, a []value) []byte { return g.appendTime(b, a, dateLayout) }},
	{Name: "datetime", Category: "dates", Description: "A date and time in UTC (RFC 3339), from from to to.", Returns: "string",
		Args: dateArgs, Example: `{{ datetime "2024-01-01" "2024-12-31" }}`, prepare: prepareDates,
		text: func(g *gen, b []byte, a []value) []byte { return g.appendTime(b, a, time.RFC3339) }},

	// Text.
	text("text", "word", "A word.", (*gofakeit.Faker).Word),
	{Name: "words", Category: "text", Description: "count lorem ipsum words.", Returns: "string",
		Args: []Arg{{Name: "count", Type: "integer", Default: 3}}, Example: "{{ words 4 }}",
		prepare: func(a []value) ([]value, error) {
			if a[0].i < 1 || a[0].i > 1000 {
				return nil, fmt.Errorf("words: count must be from 1 to 1000")
			}
			return a, nil
		},
		text: func(g *gen, b []byte, a []value) []byte {
			for i := int64(0); i < a[0].i; i++ {
				if i > 0 {
					b = append(b, ' ')
				}
				b = g.appendWord(b, loremWords)
			}
			return b
		}},
	text("text", "sentence", "A sentence.", func(f *gofakeit.Faker) string { return f.Sentence() }),
	text("text", "paragraph", "A paragraph of a few sentences.", func(f *gofakeit.Faker) string { return f.Paragraph() }),
	text("text", "lorem", "A sentence of lorem ipsum.", func(f *gofakeit.Faker) string { return f.LoremIpsumSentence(8) }),
}
