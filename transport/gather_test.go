package transport_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/transport"
)

// gatherHandler answers /N with N bytes, gathered with its head when the
// request asks ?gather, as Decoy's read handler does.
func gatherHandler(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Path[1:])
	body := answerBody(n)
	w.Header().Set("Content-Length", strconv.Itoa(n))
	if r.URL.RawQuery == "gather" {
		g := transport.Gather(r.Context())
		defer func() {
			if err := http.NewResponseController(w).Flush(); err != nil {
				panic(err)
			}
			if err := g.Send(); err != nil {
				panic(err)
			}
		}()
	}
	w.Write(body)
}

func answerBody(n int) []byte { return answerBytes()[:n] }

var answerBytes = sync.OnceValue(func() []byte {
	b := make([]byte, transport.MaxGather+100<<10)
	for i := range b {
		b[i] = byte('a' + i%23)
	}
	return b
})

// serveGather starts an http.Server with gatherHandler, over TLS when
// cert is set, and returns its address.
func serveGather(t *testing.T, cert *transport.Certificate) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:     http.HandlerFunc(gatherHandler),
		ConnContext: transport.ConnContext,
		ErrorLog:    log.New(io.Discard, "", 0),
	}
	l := transport.LimitConnections(ln, transport.ConnLimits{Total: 100, PerClient: 100})
	if cert != nil {
		config := cert.TLSConfig()
		srv.TLSConfig = config.Clone()
		l = transport.TLS(l, config, 5*time.Second, 4<<10)
	} else {
		l = transport.JSONErrors(l, 4<<10)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// Gathered answers of every size around net/http's buffers and past
// MaxGather arrive whole and in order, on kept-alive connections read by
// several clients at once, over TCP and over TLS (HTTP/1.1 and HTTP/2,
// which gathers nothing).
func TestGatheredAnswers(t *testing.T) {
	p, cert := loadPair(t)
	h1TLS := &http.Transport{TLSClientConfig: p.ClientConfig(), MaxIdleConnsPerHost: 4}
	h2 := p.Client().Transport
	for _, tc := range []struct {
		name      string
		cert      *transport.Certificate
		transport http.RoundTripper
		scheme    string
	}{
		{"TCP", nil, &http.Transport{MaxIdleConnsPerHost: 4}, "http"},
		{"TLS HTTP/1.1", cert, h1TLS, "https"},
		{"TLS HTTP/2", cert, h2, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serveGather(t, tc.cert)
			client := &http.Client{Transport: tc.transport, Timeout: 20 * time.Second}
			sizes := []int{0, 1, 2 << 10, 4<<10 - 300, 4 << 10, 4<<10 + 1, 40 << 10, transport.MaxGather - 200, transport.MaxGather + 70<<10}
			var wg sync.WaitGroup
			errs := make(chan error, 4*len(sizes))
			for range 3 {
				wg.Go(func() {
					for _, n := range sizes {
						for _, q := range []string{"gather", ""} {
							if err := checkAnswer(client, fmt.Sprintf("%s://%s/%d?%s", tc.scheme, addr, n, q), n); err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func checkAnswer(c *http.Client, url string, n int) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	if resp.StatusCode != 200 || resp.ContentLength != int64(n) || !bytes.Equal(b, answerBody(n)) {
		return fmt.Errorf("%s: %d, Content-Length %d, %d bytes: not the answer", url, resp.StatusCode, resp.ContentLength, len(b))
	}
	return nil
}
