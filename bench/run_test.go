//go:build linux

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestVerifyEncoded(t *testing.T) {
	plain := []byte(`[{"id":1},{"id":2}]`)
	gz := gzipped(t, plain)
	for _, tc := range []struct {
		name    string
		enc     string
		wire    []byte
		wantErr string
	}{
		{"gzip of the plain answer", "gzip", gz, ""},
		{"gzip of another answer", "gzip", gzipped(t, []byte(`[{"id":1}]`)), "differ from the 19-byte plain answer"},
		{"not gzip at all", "gzip", plain, "gzip answer"},
		{"gzip cut short", "gzip", gz[:len(gz)-6], "gzip answer"},
		{"uncompressed, the same", "", plain, ""},
		{"uncompressed, different", "", []byte(`[]`), "differs from the plain one"},
		{"an encoding not checked", "br", plain, `Content-Encoding "br"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyEncoded(tc.enc, tc.wire, plain)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

func TestCPUPerRequest(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cores, reqPerSec float64
		want             float64 // µs
	}{
		{"one core at 10,000 req/s", 1, 10_000, 100},
		{"1.4 cores at 17,500 req/s", 1.4, 17_500, 80},
		{"a quarter core at 250 req/s", 0.25, 250, 1000},
		{"no answers", 1, 0, 0},
		{"no CPU read", 0, 5000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuPerRequest(tc.cores, tc.reqPerSec); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("cpuPerRequest(%v, %v) = %v µs, want %v", tc.cores, tc.reqPerSec, got, tc.want)
			}
		})
	}
}

// 429s are answers the server spent CPU on: a row's CPU per request
// divides by them too.
func TestResultCPUPerRequestCounts429s(t *testing.T) {
	for _, tc := range []struct {
		name    string
		x       result
		wantRPS float64
		wantUS  float64
	}{
		{"no load recorded", result{ServerCPU: 1, ReqPerSec: 10_000}, 10_000, 100},
		{"no 429s", result{ServerCPU: 1, ReqPerSec: 10_000, Load: &loadResult{OK: 20_000, Elapsed: 2 * time.Second}}, 10_000, 100},
		{"mostly 429s", result{ServerCPU: 0.8, ReqPerSec: 50, Load: &loadResult{OK: 100, Limited: 39_900, Elapsed: 2 * time.Second}}, 20_000, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.x.answeredPerSec(); math.Abs(got-tc.wantRPS) > 1e-9 {
				t.Errorf("answered %v a second, want %v", got, tc.wantRPS)
			}
			if got := tc.x.cpuPerRequest(); math.Abs(got-tc.wantUS) > 1e-9 {
				t.Errorf("%v µs a request, want %v", got, tc.wantUS)
			}
		})
	}
}

func TestClientHeaders(t *testing.T) {
	for _, tc := range []struct {
		client string
		want   string
	}{
		{"plain", ""},
		{"gzip", "Accept-Encoding: gzip, deflate, br\r\n"},
		{"private", "Accept-Encoding: gzip, deflate, br\r\ndecoyauthtoken: dcy_t\r\n"},
	} {
		c, ok := clientByID(tc.client)
		if !ok {
			t.Fatalf("no client %q", tc.client)
		}
		if got := headerLines(c.headers("dcy_t")); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.client, got, tc.want)
		}
	}
}

func TestQueriesAndTheirTargets(t *testing.T) {
	d := &dataFiles{size: size{N: 1000, Label: "1k"}, mockID: "pub", privateID: "priv"}
	qs := allQueries([]string{"plain", "gzip", "private"})
	if len(qs) != 3*len(queries) {
		t.Fatalf("%d queries, want %d", len(qs), 3*len(queries))
	}
	byID := map[string]query{}
	for _, q := range qs {
		byID[q.ID] = q
	}
	for _, tc := range []struct {
		id, server, want string
	}{
		{"whole", "decoy", "/mock/pub"},
		{"whole.gzip", "decoy", "/mock/pub"},
		{"whole.private", "decoy", "/mock/priv"},
		{"created.private", "decoy", "/mock/priv?order_by=createdAt&limit=100"},
		{"city", "json-server", "/users?address.city=Paris"},
		{"city", "nginx", "/floor/1k/city.json"},
		{"city.gzip", "nginx", "/floor/1k/city.json"},
		{"city.private", "nginx", "/floor/1k/private/city.json"},
	} {
		q, ok := byID[tc.id]
		if !ok {
			t.Errorf("no query %s", tc.id)
			continue
		}
		if got := target(tc.server, q, d); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.server, tc.id, got, tc.want)
		}
	}
	if got := allQueries(nil); !slices.Equal(got, queries) {
		t.Errorf("no clients: %v, want the plain queries", got)
	}
	if q := byID["status-age.private"]; q.base() != "status-age" || !q.client().Token || !q.client().Gzip {
		t.Errorf("status-age.private: base %s, client %+v", q.base(), q.client())
	}
}

func TestSplitRecords(t *testing.T) {
	doc := []byte(`[{"id":1},` + "\n" + `{"id":2,"a":[1,2]},{"id":3},{"id":4},{"id":5}]`)
	for _, tc := range []struct {
		per  int
		want []string
	}{
		{2, []string{`[{"id":1},` + "\n" + `{"id":2,"a":[1,2]}]`, `[{"id":3},` + "\n" + `{"id":4}]`, `[{"id":5}]`}},
		{5, []string{`[{"id":1},` + "\n" + `{"id":2,"a":[1,2]},` + "\n" + `{"id":3},` + "\n" + `{"id":4},` + "\n" + `{"id":5}]`}},
		{1, []string{`[{"id":1}]`, `[{"id":2,"a":[1,2]}]`, `[{"id":3}]`, `[{"id":4}]`, `[{"id":5}]`}},
	} {
		docs, err := splitRecords(doc, tc.per)
		if err != nil {
			t.Fatalf("per %d: %v", tc.per, err)
		}
		var got []string
		for _, d := range docs {
			if !json.Valid(d) {
				t.Errorf("per %d: %s is not JSON", tc.per, d)
			}
			got = append(got, string(d))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("per %d:\n%q\nwant\n%q", tc.per, got, tc.want)
		}
	}
	if _, err := splitRecords(doc, 0); err == nil {
		t.Error("0 records per document: no error")
	}
}

func TestLimitsInForce(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rate, quota string
		ok          bool
	}{
		{"both as asked", "100000", "50000", true},
		{"no rate limit", "", "50000", false},
		{"another quota", "100000", "0", false},
		{"the default rate limit instead", "100", "50000", false},
	} {
		h := http.Header{}
		if tc.rate != "" {
			h.Set("X-RateLimit-Limit", tc.rate)
		}
		h.Set("X-Quota-Limit", tc.quota)
		if err := limitsInForce(h, 100_000, defaultMonthlyQuota); (err == nil) != tc.ok {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
}

func TestRotateAnswers(t *testing.T) {
	a := &rotateAnswers{plain: [][]byte{[]byte("aaaa"), []byte("bbbbbb")}, wire: [][]byte{[]byte("a"), []byte("bbb")}, encoding: []string{"gzip", "gzip"}}
	if p, w := a.meanSizes(); p != 5 || w != 2 {
		t.Errorf("mean sizes %d and %d, want 5 and 2", p, w)
	}
	plain := &rotateAnswers{plain: a.plain, wire: a.plain, encoding: []string{"", ""}}
	if p, w := plain.meanSizes(); p != 5 || w != 0 {
		t.Errorf("uncompressed: mean sizes %d and %d, want 5 and 0", p, w)
	}
	b := &rotateAnswers{plain: a.plain, wire: [][]byte{[]byte("a"), []byte("bbx")}, encoding: a.encoding}
	for _, tc := range []struct {
		name string
		x, y *rotateAnswers
		same bool
	}{
		{"itself", a, a, true},
		{"a wire byte differs", a, b, false},
		{"encoded and not", a, plain, false},
		{"fewer answers", a, &rotateAnswers{plain: a.plain[:1], wire: a.wire[:1], encoding: a.encoding[:1]}, false},
	} {
		if got := tc.x.same(tc.y); got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
}
