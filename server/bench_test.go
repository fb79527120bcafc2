package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/dataset"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// BenchmarkReadPath measures GET /mock/{id} through the whole handler
// (middleware, cache, limits, quota count in SQLite, query, answer) on a
// 10,000-record document, with the rate limit and quota set to unlimited.
func BenchmarkReadPath(b *testing.B) {
	h, m := usersServer(b, 10000)
	tiny, err := h.Admin.CreateMock(context.Background(), bytes.NewReader([]byte(`[{"a":1},{"a":2}]`)), client.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv := h.Srv
	for _, bq := range []struct{ name, raw string }{
		{"tiny-document", "tiny"},
		{"whole-document", ""},
		{"filter+order+limit", "filters=status%5B%24eqi%5D%3Dactive&order_by=age&order_direction=desc&limit=10"},
		{"nested-equality", "filters=address.city%3DParis"},
		// The same answer built from its records each time: a query
		// string with a token is never kept (see built.go).
		{"nested-equality-not-kept", "auth_token=x&filters=address.city%3DParis"},
		{"order+limit", "order_by=createdAt&limit=100"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/mock/"+m.ID+"?"+bq.raw, nil)
		if bq.raw == "tiny" {
			req = httptest.NewRequest(http.MethodGet, "/mock/"+tiny.ID, nil)
		}
		srv.ServeHTTP(httptest.NewRecorder(), req) // load and build columns
		b.Run(bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkClients reads the 1,000-user document (233 KiB) and a small
// query over it (10 records) over loopback, one keep-alive connection, as
// real clients send them: plain, accepting gzip as browsers, Node fetch and
// axios do, with a token on a private mock, and on a mock whose rate limit
// is counted on every request.
func BenchmarkClients(b *testing.B) {
	h, open := usersServer(b, 1000)
	users := dataset.Users(1000)
	private := h.Create(string(users), client.CreateOptions{Private: true})
	limited := h.Create(string(users), client.CreateOptions{RateLimit: servertest.Ptr(int64(decoy.MaxRateLimit))})
	const gzip = "Accept-Encoding: gzip, deflate, br\r\n"
	for _, c := range []struct{ name, id, header string }{
		{"plain", open.ID, ""},
		{"gzip", open.ID, gzip},
		{"token+gzip", private.ID, gzip + "decoyauthtoken: " + private.Token + "\r\n"},
		{"rate-limited+gzip", limited.ID, gzip},
	} {
		for _, q := range []struct{ name, query string }{
			{"whole", ""},
			{"limit-10", "?order_by=age&limit=10"},
		} {
			b.Run(c.name+"/"+q.name, func(b *testing.B) { readOverLoopback(b, h.URL, "/mock/"+c.id+q.query, c.header) })
		}
	}
}

// BenchmarkLargeAnswer reads the city filter of the 100,000-user document
// (8,432 records, 2 MiB) over loopback: sent from
// the body kept after the second request (kept), or built from the scattered
// records each time (not-kept: a query string with a token is never kept;
// see built.go).
func BenchmarkLargeAnswer(b *testing.B) {
	h, m := usersServer(b, 100000)
	for _, c := range []struct{ name, query string }{
		{"kept", "filters=address.city%3DParis"},
		{"not-kept", "auth_token=x&filters=address.city%3DParis"},
	} {
		b.Run(c.name, func(b *testing.B) { readOverLoopback(b, h.URL, "/mock/"+m.ID+"?"+c.query, "") })
	}
}

// usersServer starts a server with no rate limit or quota, holding a mock of
// n benchmark users. Its cache has decoy serve's default bound (1 GiB), so
// that what keeping within it costs a read is measured.
func usersServer(b *testing.B, n int, configure ...func(*server.Config)) (*servertest.Harness, *client.Mock) {
	h := servertest.New(b, append([]func(*server.Config){func(c *server.Config) {
		c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0
		c.MaxDataBytes = 64 << 20
		c.MaxCacheBytes = 1 << 30
	}}, configure...)...)
	m, err := h.Admin.CreateMock(context.Background(), bytes.NewReader(dataset.Users(n)), client.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return h, m
}

// readOverLoopback GETs target with the header lines given on one
// keep-alive connection to url, b.N times, reading each answer whole.
func readOverLoopback(b *testing.B, url, target, header string) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	buf := make([]byte, 256<<10)
	req := []byte("GET " + target + " HTTP/1.1\r\nHost: bench\r\n" + header + "\r\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(writerOnly{io.Discard}, resp.Body, buf)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		resp.Body.Close()
		b.SetBytes(n)
	}
}

// writerOnly hides io.Discard's ReadFrom, so that io.CopyBuffer uses its
// buffer.
type writerOnly struct{ io.Writer }

// BenchmarkRoutes reads the same small query of the 1,000-user document over
// loopback, as a browser sends it (gzip): at /mock/{id}, through a route of
// a project with one route, through the same route in a project of 10,000
// routes, and one record through an item route. A routed read should cost
// what the read at /mock/{id} costs (§11.4: within 5%), whatever the number
// of routes.
func BenchmarkRoutes(b *testing.B) {
	h, m := usersServer(b, 1000, withTeams)
	store := h.Store
	ctx := context.Background()
	big, err := store.CreateProject(ctx, &decoy.Project{WorkspaceID: decoy.DefaultWorkspaceID, Name: "big"})
	if err != nil {
		b.Fatal(err)
	}
	bigMock, err := h.Admin.CreateMock(ctx, bytes.NewReader(dataset.Users(1000)), client.CreateOptions{ProjectID: big.ID})
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []*decoy.Route{
		{ProjectID: decoy.DefaultProjectID, Method: "GET", Path: "/users", MockID: m.ID, Action: decoy.ActionRead},
		{ProjectID: decoy.DefaultProjectID, Method: "GET", Path: "/users/{id}", MockID: m.ID, Action: decoy.ActionRead},
	} {
		if _, err := store.CreateRoute(ctx, r, decoy.DefaultMaxRoutes); err != nil {
			b.Fatal(err)
		}
	}
	routes := make([]*decoy.Route, 0, decoy.DefaultMaxRoutes)
	for i := range decoy.DefaultMaxRoutes - 2 {
		routes = append(routes, &decoy.Route{Method: "GET", Path: fmt.Sprintf("/r%d/things/{id}", i), MockID: bigMock.ID, Action: decoy.ActionRead})
	}
	routes = append(routes,
		&decoy.Route{Method: "GET", Path: "/users", MockID: bigMock.ID, Action: decoy.ActionRead},
		&decoy.Route{Method: "GET", Path: "/users/{id}", MockID: bigMock.ID, Action: decoy.ActionRead})
	if _, err := store.WriteImport(ctx, decoy.ImportBatch{ProjectID: big.ID, Routes: routes, MaxRoutes: decoy.DefaultMaxRoutes}); err != nil {
		b.Fatal(err)
	}
	const gzip = "Accept-Encoding: gzip, deflate, br\r\n"
	const q = "?order_by=age&limit=10"
	for _, c := range []struct{ name, target string }{
		{"mock", "/mock/" + m.ID + q},
		{"route-of-1", "/p/default/users" + q},
		{"route-of-10000", "/p/" + big.Slug + "/users" + q},
		{"item-of-1", "/p/default/users/500"},
		{"item-of-10000", "/p/" + big.Slug + "/users/500"},
	} {
		b.Run(c.name, func(b *testing.B) { readOverLoopback(b, h.URL, c.target, gzip) })
	}
}

// BenchmarkRules reads the same small query of the 1,000-user document,
// as a browser sends it (gzip), through a route without rules and through
// routes of 20 rules none of which holds (§13.1), so that each request is
// asked all 20: conditions on one header (the request's document holds
// that header alone), and conditions on the method, a query parameter,
// two headers and the body (not read: a GET has none). A route with rules
// should answer at least 0.9× as fast as one without.
//
// The three are read in turn, one request each per iteration, so that the
// load of a shared machine weighs on them alike: each reports its own
// median ns/request, and the rules' routes their speed relative to the
// route without (speed-…: 1 is as fast). Over loopback, on one keep-alive
// connection each, as BenchmarkRoutes; and through the handler alone,
// where what the rules cost is a larger share.
func BenchmarkRules(b *testing.B) {
	h, m := usersServer(b, 1000, withTeams)
	ctx := context.Background()
	header := make([]string, 20)
	mixed := make([]string, 20)
	for i := range header {
		header[i] = fmt.Sprintf(`{"name":"case %d","when":"header.x-scenario=case-%d","status":503}`, i, i)
		switch i % 4 {
		case 0:
			mixed[i] = fmt.Sprintf(`{"when":"method=POST&query.page=%d","status":503}`, i)
		case 1:
			mixed[i] = fmt.Sprintf(`{"when":"header.x-scenario=case-%d&header.accept-encoding[$eqi]=none","status":503}`, i)
		case 2:
			mixed[i] = fmt.Sprintf(`{"when":"query.order_by[$ne]=age&query.x=%d","body":{"n":%d}}`, i, i)
		default:
			mixed[i] = fmt.Sprintf(`{"when":"body.kind=k%d","times":3,"status":500}`, i)
		}
	}
	for _, r := range []struct{ path, rules string }{
		{"/users", `[]`},
		{"/header-rules", "[" + strings.Join(header, ",") + "]"},
		{"/mixed-rules", "[" + strings.Join(mixed, ",") + "]"},
	} {
		body := `{"method":"GET","path":"` + r.path + `","mock_id":"` + m.ID + `","rules":` + r.rules + `}`
		if err := h.Admin.Do(ctx, "POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", json.RawMessage(body), nil); err != nil {
			b.Fatal(err)
		}
	}
	const q = "?order_by=age&limit=10"
	targets := []struct{ name, target string }{
		{"no-rules", "/p/default/users" + q},
		{"20-header-rules", "/p/default/header-rules" + q},
		{"20-mixed-rules", "/p/default/mixed-rules" + q},
	}
	// report reports the median time of a request to each target: a
	// shared machine takes the process off its core now and then, for
	// longer than many requests take, which the mean would count.
	report := func(b *testing.B, took [][]time.Duration) {
		med := make([]float64, len(targets))
		for i, t := range targets {
			slices.Sort(took[i])
			med[i] = float64(took[i][len(took[i])/2].Nanoseconds())
			b.ReportMetric(med[i], "ns/"+t.name)
			if i > 0 {
				b.ReportMetric(med[0]/med[i], "speed-"+t.name)
			}
		}
		b.ReportMetric(0, "ns/op") // an iteration is three requests: see the metrics per route
	}
	b.Run("loopback", func(b *testing.B) {
		const head = "Accept-Encoding: gzip, deflate, br\r\nX-Scenario: none\r\n"
		reads := make([]func(), len(targets))
		for i, t := range targets {
			reads[i] = loopbackReader(b, h.URL, t.target, head)
		}
		took := make([][]time.Duration, len(targets))
		b.ReportAllocs()
		for b.Loop() {
			for i, read := range reads {
				start := time.Now()
				read()
				took[i] = append(took[i], time.Since(start))
			}
		}
		report(b, took)
	})
	b.Run("handler", func(b *testing.B) {
		reqs := make([]*http.Request, len(targets))
		for i, t := range targets {
			reqs[i] = httptest.NewRequest(http.MethodGet, t.target, nil)
			reqs[i].Header.Set("Accept-Encoding", "gzip, deflate, br")
			reqs[i].Header.Set("X-Scenario", "none")
		}
		took := make([][]time.Duration, len(targets))
		b.ReportAllocs()
		for b.Loop() {
			for i, req := range reqs {
				rec := httptest.NewRecorder()
				start := time.Now()
				h.Srv.ServeHTTP(rec, req)
				took[i] = append(took[i], time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		}
		report(b, took)
	})
}

// loopbackReader returns a function that GETs target with the header lines
// given on one keep-alive connection to url, reading the answer whole.
func loopbackReader(b *testing.B, url, target, header string) func() {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	br := bufio.NewReaderSize(conn, 64<<10)
	buf := make([]byte, 256<<10)
	req := []byte("GET " + target + " HTTP/1.1\r\nHost: bench\r\n" + header + "\r\n")
	return func() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(writerOnly{io.Discard}, resp.Body, buf); err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}
