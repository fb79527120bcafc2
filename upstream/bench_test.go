package upstream_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/decoy-mock/decoy/upstream"
)

// BenchmarkForward is a request passed through the proxy to an upstream
// on loopback, the answer (1 KiB of JSON) read whole; BenchmarkDirect the
// same request sent straight to the upstream, for comparison.
func BenchmarkForward(b *testing.B) {
	body := `[{"id":1,"name":"x"}]`
	for len(body) < 1024 {
		body += " "
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer up.Close()
	p := upstream.New(upstream.Config{Allow: loopback, TokenHeaders: []string{"decoyauthtoken"}, TokenPrefix: "dcy_"})
	defer p.Close()
	base, _ := upstream.ParseBase(up.URL + "/api")
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := p.Forward(w, r, upstream.Target{Base: base, Path: r.URL.EscapedPath()}, nil); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	}))
	defer front.Close()
	run := func(b *testing.B, url string) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := c.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
	b.Run("proxied", func(b *testing.B) { run(b, front.URL+"/users?limit=1") })
	b.Run("direct", func(b *testing.B) { run(b, up.URL+"/api/users?limit=1") })
}
