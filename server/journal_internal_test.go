package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/query"
)

// A project's request body is kept as the handler reads it: whole up to
// decoy.MaxJournalBody, cut and marked past it, and marked when the
// handler did not read it whole.
func TestJournalBody(t *testing.T) {
	ring := journal.NewRing(journal.RingConfig{Size: 100})
	j := journal.New(journal.Config{Store: ring})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { j.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	s := New(Config{Journal: j})
	big := strings.Repeat("é", decoy.MaxJournalBody) // two bytes each: twice the bound
	for _, tc := range []struct {
		name, path, body string
		chunked          bool
		read             int // bytes the handler reads; -1: all
		want             string
		cut              bool
	}{
		{"small, read", "/p/x/a", `{"name":"Ann"}`, false, -1, `{"name":"Ann"}`, false},
		{"small, chunked, read", "/p/x/a", `{"a":1}`, true, -1, `{"a":1}`, false},
		{"at the bound", "/p/x/a", strings.Repeat("a", decoy.MaxJournalBody), false, -1, strings.Repeat("a", decoy.MaxJournalBody), false},
		{"past the bound", "/p/x/a", big, false, -1, big[:decoy.MaxJournalBody], true},
		{"past the bound, chunked", "/p/x/a", big, true, -1, big[:decoy.MaxJournalBody], true},
		{"read in part", "/p/x/a", "0123456789", false, 4, "0123", true},
		{"not read", "/p/x/a", "0123456789", false, 0, "", true},
		{"read exactly, no EOF seen", "/p/x/a", "0123456789", false, 10, "0123456789", false},
		{"a read at /mock/, which reads no body", "/mock/x", "0123456789", false, -1, "", true},
		{"none", "/p/x/a", "", false, -1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := tc.name
			h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				noteOf(w).project = project
				switch {
				case tc.read < 0:
					io.Copy(io.Discard, r.Body)
				case tc.read > 0:
					io.ReadFull(r.Body, make([]byte, tc.read))
				}
				w.WriteHeader(http.StatusTeapot)
			}))
			req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
			}
			if tc.body == "" {
				req.ContentLength = 0
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			var es []*decoy.JournalEntry
			for deadline := time.Now().Add(5 * time.Second); len(es) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				es, _, _ = ring.List(context.Background(), project, decoy.JournalFilter{}, "", 10)
			}
			if len(es) != 1 {
				t.Fatalf("%d entries", len(es))
			}
			e := es[0]
			if e.Body != tc.want || e.BodyCut != tc.cut || e.Status != http.StatusTeapot {
				t.Errorf("body of %d bytes, cut %v, status %d; want %d bytes, cut %v", len(e.Body), e.BodyCut, e.Status, len(tc.want), tc.cut)
			}
		})
	}
}

// referenceEntry is the entry of a request as the journal made it before
// records: a map of its headers, strings.EqualFold on their names.
func referenceEntry(s *Server, q *journalRequest, r *http.Request, status int, at time.Time, elapsed time.Duration) *decoy.JournalEntry {
	h := make(map[string]string, len(r.Header)+1)
	if r.Host != "" {
		h["Host"] = r.Host
	}
	for name, values := range r.Header {
		secret := false
		for _, n := range append([]string{"serviceauthtoken", "decoyauthtoken", "X-Acme-Key"}, secretHeaders...) {
			secret = secret || strings.EqualFold(name, n)
		}
		switch {
		case secret:
			h[name] = "REDACTED"
		default:
			h[name] = strings.Join(values, ", ")
		}
	}
	e := &decoy.JournalEntry{At: at.UTC(), Method: r.Method, Path: r.URL.EscapedPath(), Query: query.Redact(r.URL.RawQuery), Headers: h,
		RouteID: q.note.route, MockID: q.note.mock, Rule: q.note.rule, Status: status, DurationMS: float64(elapsed.Microseconds()) / 1000,
		Client: s.clientAddr(r), Forwarded: q.note.forwarded}
	if b := q.body; b != nil {
		e.Body = string(b.kept)
		e.BodyCut = b.n > int64(len(b.kept)) || !b.whole(r)
	} else {
		e.BodyCut = hasBody(r)
	}
	return e
}

// A request's record, written from the request, reads back as the entry
// the journal made of it from a map of its headers: secrets REDACTED in
// any letter case, values joined, the Host among them (the request's,
// over a Host header), the query redacted, the body kept and cut.
func TestJournalRecordOfRequest(t *testing.T) {
	s := New(Config{TokenHeader: "X-Acme-Key"})
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	for i, tc := range []struct {
		target string
		host   string
		header http.Header
		body   *bodyCopy
		note   journalNote
	}{
		{"/p/x/users?limit=1&auth_token=s3cr3t", "example.com", http.Header{"Accept": {"a/b", "c/d"}, "Authorization": {"Bearer s"},
			"cookie": {"a=1"}, "SERVICEAUTHTOKEN": {"t"}, "x-acme-key": {"k"}, "X-Acme-Kez": {"not a secret"}, "Set-Cookie": {"x", "y"},
			"Proxy-Authorization": {"p"}, "Decoyauthtoken": {"d"}, "X-Empty": {}, "X-Blank": {""}}, nil,
			journalNote{project: "x", route: "r", mock: "m", rule: "slow", forwarded: true}},
		{"/mock/m?x=%41", "", http.Header{"Host": {"from the header"}}, &bodyCopy{kept: []byte(`{"a":1}`), n: 7, eof: true}, journalNote{project: "x"}},
		{"/p/x/a%2Fb", "h", http.Header{"Host": {"from the header"}, "Authorizatio": {"short"}, "Authorization2": {"long"}},
			&bodyCopy{kept: []byte("0123"), n: 10}, journalNote{project: "x"}},
		{"/p/x/", "h", nil, nil, journalNote{project: "x"}},
	} {
		r := httptest.NewRequest("POST", tc.target, strings.NewReader("0123456789"))
		r.Host, r.Header = tc.host, tc.header
		q := &journalRequest{note: tc.note, body: tc.body}
		elapsed := time.Duration(i)*time.Millisecond + 1234*time.Nanosecond
		got, err := decoy.ParseJournalRecord(s.appendJournalRecord(nil, q, r, 201+i, at, elapsed))
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		want := referenceEntry(s, q, r, 201+i, at, elapsed)
		if !got.At.Equal(want.At) || !reflect.DeepEqual(got.Headers, want.Headers) {
			t.Errorf("%s: at %v headers %v\nwant at %v headers %v", tc.target, got.At, got.Headers, want.At, want.Headers)
		}
		got.At, want.At, got.Headers, want.Headers = time.Time{}, time.Time{}, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.target, got, want)
		}
	}
}

// Writing a request's record in a buffer large enough allocates nothing:
// not the secret headers' check, nor the joining of values.
func TestJournalRecordAllocs(t *testing.T) {
	s := New(Config{TokenHeader: "X-Acme-Key"})
	r := httptest.NewRequest("GET", "/p/x/users?limit=1", nil)
	r.Header = http.Header{"Accept": {"a/b", "c/d"}, "Authorization": {"Bearer s"}, "X-Request-Id": {"1"}, "X-Acme-Key": {"k"}}
	q := &journalRequest{note: journalNote{project: "x", route: "r", mock: "m"}}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { s.appendJournalRecord(buf[:0], q, r, 200, time.Now(), time.Millisecond) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
}

// equalFoldASCII is strings.EqualFold on ASCII.
func TestEqualFoldASCII(t *testing.T) {
	for a := range 128 {
		for b := range 128 {
			x, y := string(rune(a))+"-K", string(rune(b))+"-k"
			if got, want := equalFoldASCII(x, y), strings.EqualFold(x, y); got != want {
				t.Fatalf("%q %q: %v, want %v", x, y, got, want)
			}
		}
	}
}

// Once answered, a request is the journal's only as its record: the
// queue holds neither the request nor its response writer, which go
// while their record waits to be written.
func TestJournalLetsRequestGo(t *testing.T) {
	ring := journal.NewRing(journal.RingConfig{Size: 10})
	j := journal.New(journal.Config{Store: ring}) // not run yet: the record stays queued
	s := New(Config{Journal: j})
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noteOf(w).project = "x"
		w.WriteHeader(http.StatusOK)
	}))
	var req weak.Pointer[http.Request]
	var rw weak.Pointer[httptest.ResponseRecorder]
	func() {
		r, w := httptest.NewRequest("GET", "/p/x/a?b=1", nil), httptest.NewRecorder()
		req, rw = weak.Make(r), weak.Make(w)
		h.ServeHTTP(w, r)
	}()
	for range 3 {
		runtime.GC()
	}
	if req.Value() != nil || rw.Value() != nil {
		t.Errorf("the queue holds the request (%v) or its response writer (%v)", req.Value() != nil, rw.Value() != nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.Run(ctx) // writes what is queued, once
	es, _, err := ring.List(context.Background(), "x", decoy.JournalFilter{}, "", 10)
	if err != nil || len(es) != 1 || es[0].Path != "/p/x/a" || es[0].Query != "b=1" {
		t.Errorf("written: %v %v", es, err)
	}
}

// A secret name in any letter case has its bit in the filter, and of the
// headers a browser sends that are no secret, few do (each that does is
// compared with the secret names).
func TestSecretFilter(t *testing.T) {
	s := New(Config{TokenHeader: "X-Acme-Key"})
	for _, n := range s.secretHeaders {
		for _, v := range []string{n, strings.ToUpper(n), strings.ToLower(n), http.CanonicalHeaderKey(n)} {
			if w, bit := secretBit(v); s.secretFilter[w]&bit == 0 || !s.secretHeader(v) {
				t.Errorf("%q: not found secret", v)
			}
		}
	}
	hits := 0
	for _, n := range []string{"Connection", "Sec-Ch-Ua-Platform", "User-Agent", "Accept", "Sec-Ch-Ua", "Sec-Ch-Ua-Mobile",
		"Origin", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest", "Referer", "Accept-Encoding", "Accept-Language",
		"If-None-Match", "Content-Type", "Content-Length", "X-Request-Id", ""} {
		if s.secretHeader(n) {
			t.Errorf("%q: secret", n)
		}
		if w, bit := secretBit(n); s.secretFilter[w]&bit != 0 {
			hits++
		}
	}
	if hits > 2 {
		t.Errorf("%d headers of 18 that are no secret pass the filter", hits)
	}
}
