package decoy_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// plainEntry is a JournalEntry without its methods: encoding/json writes
// it from the field tags.
type plainEntry decoy.JournalEntry

// reference is what encoding/json writes of e from its tags, with HTML
// escaped or not.
func reference(t testing.TB, e *decoy.JournalEntry, escapeHTML bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode((*plainEntry)(e)); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sameJSON checks that the JSON of e is what encoding/json writes from
// the tags, through AppendJSON and through json.Marshal, and that it
// decodes.
func sameJSON(t testing.TB, e *decoy.JournalEntry) {
	t.Helper()
	got := e.AppendJSON(nil)
	if want := reference(t, e, false); !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
	}
	marshaled, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := reference(t, e, true); !bytes.Equal(marshaled, want) {
		t.Fatalf("json.Marshal\n got %s\nwant %s", marshaled, want)
	}
	var back decoy.JournalEntry
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("%s does not decode: %v", got, err)
	}
}

// Every field of an entry is written, as its tag says: an entry with each
// field set (a field added to JournalEntry is set too, and must be
// written) and entries of every kind of text.
func TestJournalEntryJSON(t *testing.T) {
	full := fullEntry(t, " <&> \"é\"", "1", true)
	sameJSON(t, &full)
	for _, e := range []decoy.JournalEntry{
		{},
		{Headers: map[string]string{}},
		{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)), Status: 200, DurationMS: 0.0001},
		{Body: "\x00\x01\x07\b\f\n\r\t\x1f\x7f \"\\ / < > & \u2028\u2029 é 🙂", Query: "a=%ZZ&b=\xff\xfe", Path: "/\xc3"},
		{DurationMS: 1e21}, {DurationMS: 1e-7}, {DurationMS: -3.5}, {DurationMS: 123456789.125},
		{Headers: map[string]string{"b": "", "a": "\u2028", "\xff": "x"}},
	} {
		sameJSON(t, &e)
	}
}

// Durations in milliseconds made from microseconds, which AppendJSON
// writes without strconv's search, are written as encoding/json writes
// them: every one up to 100 s, at the bound of 1e12 ms and around it,
// and the ones that are not whole thousandths (-0 among them).
func TestJournalEntryJSONDurations(t *testing.T) {
	for us := range int64(100_000_000) / 997 {
		sameJSON(t, &decoy.JournalEntry{DurationMS: float64(us*997) / 1000})
	}
	for _, ms := range []float64{0.001, 0.01, 0.1, 0.656, 1, 10, 12.5, 100.1, 999.999, 1e12 - 0.001, 1e12, 1e12 + 0.5,
		999999999999.999, 123456789012.345, -0.001, -42.5, math.Copysign(0, -1), 0.0005, 1.0 / 3, 0.1 + 0.2, 1e-6, 5e-324} {
		sameJSON(t, &decoy.JournalEntry{DurationMS: ms})
	}
}

// FuzzJournalEntryJSON checks AppendJSON against encoding/json on any text.
func FuzzJournalEntryJSON(f *testing.F) {
	f.Add("GET", "/p/x", "a=1", "body", "Accept", "*/*", 200, 1.5, true, int64(0))
	f.Add("\u2028", "\xff", "<>&", "\x00\"\\", "\x7f", "🙂", -1, 1e-9, false, int64(1e18))
	f.Fuzz(func(t *testing.T, method, path, query, body, name, value string, status int, ms float64, cut bool, nanos int64) {
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			return // no JSON number; AppendJSON writes 0
		}
		e := decoy.JournalEntry{ID: name + value, At: time.Unix(0, nanos%(1<<62)).UTC(), Method: method, Path: path, Query: query,
			Headers: map[string]string{name: value, value: name}, Body: body, BodyCut: cut, RouteID: path, MockID: query,
			Rule: value, Status: status, DurationMS: ms, Client: method, Forwarded: !cut}
		sameJSON(t, &e)
		if utf8.ValidString(body) && !strings.ContainsAny(body, "\u2028\u2029") {
			var back decoy.JournalEntry
			json.Unmarshal(e.AppendJSON(nil), &back)
			if back.Body != body {
				t.Errorf("body %q came back %q", body, back.Body)
			}
		}
	})
}

// A NaN duration, which JSON cannot hold, is written 0.
func TestJournalEntryJSONNaN(t *testing.T) {
	e := decoy.JournalEntry{DurationMS: math.NaN()}
	if !bytes.Contains(e.AppendJSON(nil), []byte(`"duration_ms":0,`)) {
		t.Errorf("%s", e.AppendJSON(nil))
	}
}

func BenchmarkJournalEntryJSON(b *testing.B) {
	e := &decoy.JournalEntry{ID: "1795775298895-0", At: time.Now(), Method: "GET", Path: "/p/default/users", Query: "order_by=age&limit=10",
		Headers: map[string]string{"Accept": "application/json", "Accept-Encoding": "gzip, deflate, br", "Accept-Language": "en-US,en;q=0.9",
			"Host": "127.0.0.1:8080", "Origin": "http://localhost:5173", "Referer": "http://localhost:5173/",
			"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"},
		RouteID: "d15c9d3d-77d0-46ac-9946-337ebd22f504", MockID: "648e337a-8387-554d-a85e-4722043881e5", Status: 200, DurationMS: 0.656, Client: "127.0.0.1"}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = e.AppendJSON(buf[:0])
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal((*plainEntry)(e))
		}
	})
}

// fullEntry returns an entry with each field set (a field added to
// JournalEntry is set too, or the test fails asking for it): each string
// its field's name and text, the headers' X-A to xa, and the ID only
// when withID.
func fullEntry(t *testing.T, text, xa string, withID bool) decoy.JournalEntry {
	t.Helper()
	var full decoy.JournalEntry
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			if withID || name != "ID" { // the store's
				f.SetString(name + text)
			}
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(503)
		case reflect.Float64:
			f.SetFloat(12.345)
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"X-B": "2", "Authorization": "REDACTED", "X-A": xa}))
		case reflect.Struct: // At
			f.Set(reflect.ValueOf(time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)))
		default:
			t.Fatalf("field %s of a kind the test does not fill: add it", name)
		}
	}
	return full
}
