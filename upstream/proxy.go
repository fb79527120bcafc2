package upstream

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/query"
)

// DefaultTimeout is --upstream-timeout's default.
const DefaultTimeout = 30 * time.Second

// Config is what a Proxy needs.
type Config struct {
	// Timeout bounds each stage of an exchange with an upstream: the
	// connection, the TLS handshake, and the wait for its answer's head
	// (0: DefaultTimeout). A body is then streamed for as long as it
	// flows.
	Timeout time.Duration
	// Allow are the networks upstreams may be in besides public ones
	// (--upstream-allow).
	Allow []netip.Prefix
	// TokenHeaders are the headers that carry Decoy's mock tokens: never
	// passed on, either way.
	TokenHeaders []string
	// TokenPrefix starts every Decoy secret ("dcy_"): an Authorization
	// or an auth_token parameter that carries one is not passed on; any
	// other is the app's own, and is.
	TokenPrefix string
	// SessionCookie is the name of Decoy Studio's session cookie, never
	// passed on.
	SessionCookie string
	// Header are headers every answer gets in place of the upstream's
	// of the same names: the policy of the origin answers are served
	// from (a sandbox, so that an upstream's HTML runs no script there).
	Header http.Header
	// Resolver, when set, resolves upstreams' names (tests); nil: the
	// system's.
	Resolver *net.Resolver
}

// Proxy passes requests to upstreams. It is safe for concurrent use.
type Proxy struct {
	cfg       Config
	guard     *Guard
	transport *http.Transport
	// via is what this proxy adds to the Via header of each request it
	// passes on, "1.1 decoy-" and a random name of its own, by which it
	// knows a request that comes back to it (ErrLoop).
	via string
}

// ErrLoop answers a request that this proxy passed on already: an
// upstream that leads back to the same server.
var ErrLoop = answer.New(http.StatusLoopDetected, "Upstream loop: the upstream sent the request back to this server")

// ErrDotSegment is the error of a request whose path holds a "." or ".."
// segment once unescaped: an upstream that unescapes and cleans it would
// serve a path outside its base (/api/%2e%2e/admin is /admin there).
var ErrDotSegment = answer.New(http.StatusBadRequest, `The path holds a "." or ".." segment, escaped or not: it is not passed on`)

// DotSegments reports whether the escaped path holds a "." or ".."
// segment once unescaped, a "/" or a "\\" escaped or not separating the
// segments (an upstream may take either for one).
func DotSegments(path string) bool {
	if !strings.Contains(path, ".") && !strings.Contains(path, "%") {
		return false
	}
	p, err := url.PathUnescape(path)
	if err != nil {
		return true // net/http parsed the request: not reached
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		// "..;x" is ".." to servlet containers (path parameters).
		if seg, _, _ = strings.Cut(seg, ";"); seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// New returns a Proxy for cfg.
func New(cfg Config) *Proxy {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	g := NewGuard(cfg.Allow)
	d := g.dialer(cfg.Timeout)
	d.Resolver = cfg.Resolver
	t := &http.Transport{
		// No proxy from the environment: a proxy would connect on
		// Decoy's behalf, out of the guard's sight.
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	var name [8]byte
	_, _ = rand.Read(name[:])
	return &Proxy{cfg: cfg, guard: g, transport: t, via: "1.1 decoy-" + hex.EncodeToString(name[:])}
}

// looped reports whether r came through this proxy already.
func (p *Proxy) looped(r *http.Request) bool {
	for _, v := range r.Header.Values("Via") {
		for _, hop := range strings.Split(v, ",") {
			if strings.TrimSpace(hop) == p.via {
				return true
			}
		}
	}
	return false
}

// Close closes the idle connections to upstreams.
func (p *Proxy) Close() { p.transport.CloseIdleConnections() }

// Capture is a GET answer kept for recording: filled in by Forward when
// the answer is a 2xx with a JSON body (in any JSON media type) of at
// most Limit bytes. Such a body is read whole before the answer is passed
// on, and Keep runs then, so that a client that has the answer finds it
// recorded; a longer one is streamed and not kept.
type Capture struct {
	// Limit is the most bytes of a body kept; a longer one is not.
	Limit int64
	// Keep, when set, is called with the capture filled in, before the
	// answer is passed on.
	Keep func(*Capture)
	// Status and ContentType are the answer's.
	Status      int
	ContentType string
	// Body is the answer's body, once read whole; nil otherwise.
	Body []byte
}

// Target is where a request goes: the upstream's base (ParseBase) and
// the request's path after the project's prefix, escaped as it came.
type Target struct {
	Base *url.URL
	Path string
}

// Forward passes r to its upstream at t and writes the upstream's answer
// to w, streamed. It returns an error, written by the caller, when no
// answer came: ErrNotAllowed when the upstream's address is refused, else
// a 502 "Upstream unreachable: <why>"; ErrLoop for a request it passed
// on itself. When c is not nil and r is a GET,
// the answer is captured into c for recording (see Capture).
func (p *Proxy) Forward(w http.ResponseWriter, r *http.Request, t Target, c *Capture) error {
	if p.looped(r) {
		return ErrLoop
	}
	if DotSegments(t.Path) {
		return ErrDotSegment
	}
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { p.rewrite(pr, t, c != nil) },
		Transport: p.transport,
		// Streamed as it comes: a server-sent event reaches the client
		// at once.
		FlushInterval:  -1,
		ModifyResponse: func(res *http.Response) error { return p.answer(res, c) },
		ErrorHandler: func(_ http.ResponseWriter, _ *http.Request, err error) {
			failed = p.failure(err)
		},
		ErrorLog: discardLog,
	}
	rp.ServeHTTP(w, r)
	return failed
}

// rewrite makes the request to the upstream: the request's method, body
// and query, its path under the upstream's base, and its headers less
// Decoy's secrets (ReverseProxy removes hop-by-hop headers, and with
// Rewrite the X-Forwarded ones the client sent). capture asks for an
// answer Forward can read: not compressed.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest, t Target, capture bool) {
	out := pr.Out
	path, err := url.PathUnescape(t.Path)
	if err != nil {
		path = t.Path // net/http parsed the request: not reached
	}
	out.URL.Path, out.URL.RawPath = path, t.Path
	if out.URL.EscapedPath() != t.Path {
		out.URL.RawPath = ""
	}
	out.URL.RawQuery = p.withoutToken(out.URL.RawQuery)
	pr.SetURL(t.Base)
	if t.Path == "/" && t.Base.Path != "" {
		// The base itself, as the project's root is: no trailing "/"
		// the upstream would tell apart.
		out.URL.Path, out.URL.RawPath = t.Base.Path, t.Base.RawPath
	}
	p.stripSecrets(out.Header)
	// As every proxy does (RFC 9110, 7.6.3); it also tells a request that
	// comes back.
	out.Header.Add("Via", p.via)
	if capture && out.Method == http.MethodGet {
		// The transport asks for gzip itself and unpacks the answer.
		out.Header.Del("Accept-Encoding")
	}
}

// stripSecrets removes from a request's headers what carries Decoy's
// secrets: the token headers, an Authorization holding a Decoy secret,
// and Studio's session cookie.
func (p *Proxy) stripSecrets(h http.Header) {
	for _, name := range p.cfg.TokenHeaders {
		h.Del(name)
	}
	if p.decoySecret(h.Get("Authorization")) {
		h.Del("Authorization")
	}
	if p.cfg.SessionCookie != "" && len(h["Cookie"]) > 0 {
		var kept []string
		for _, c := range h["Cookie"] {
			for _, part := range strings.Split(c, ";") {
				name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
				if part = strings.TrimSpace(part); part != "" && name != p.cfg.SessionCookie {
					kept = append(kept, part)
				}
			}
		}
		h.Del("Cookie")
		if len(kept) > 0 {
			h.Set("Cookie", strings.Join(kept, "; "))
		}
	}
}

// decoySecret reports whether an Authorization value carries a Decoy
// secret, with the Bearer scheme or none.
func (p *Proxy) decoySecret(v string) bool {
	v = strings.TrimSpace(v)
	if scheme, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
		v = strings.TrimSpace(rest)
	}
	return p.cfg.TokenPrefix != "" && strings.HasPrefix(v, p.cfg.TokenPrefix)
}

// withoutToken removes from a raw query the auth_token parameters that
// carry a Decoy secret, leaving every other byte as it came.
func (p *Proxy) withoutToken(raw string) string {
	if raw == "" {
		return raw // a key may be escaped (auth%5Ftoken): every query is read
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, part := range parts {
		k, v, _ := strings.Cut(part, "=")
		// Read as Decoy reads a query (query.Params): an invalid escape
		// kept as written.
		if query.Unescape(k, true) == "auth_token" && p.decoySecret(query.Unescape(v, true)) {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// answer prepares the upstream's answer for the client: the token headers
// never come back, and Decoy's CORS policy is the one the client sees (the
// server set it before forwarding). When c asks for it, a GET's JSON
// answer is captured as it is read.
func (p *Proxy) answer(res *http.Response, c *Capture) error {
	h := res.Header
	for _, name := range p.cfg.TokenHeaders {
		h.Del(name)
	}
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			delete(h, name)
		}
	}
	for name, values := range p.cfg.Header {
		h[name] = values
	}
	if c == nil || res.Request.Method != http.MethodGet || res.StatusCode < 200 || res.StatusCode > 299 ||
		res.StatusCode == http.StatusNoContent || res.StatusCode == http.StatusPartialContent {
		return nil
	}
	if ce := h.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil
	}
	ct := h.Get("Content-Type")
	if !IsJSON(ct) || res.ContentLength > c.Limit {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, c.Limit+1))
	if err != nil {
		res.Body.Close()
		return err // the answer broke off: a 502
	}
	if int64(len(body)) > c.Limit {
		// Too long to keep: passed on as it comes, what was read first.
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), res.Body), res.Body}
		return nil
	}
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.Status, c.ContentType, c.Body = res.StatusCode, ct, body
	if c.Keep != nil {
		c.Keep(c)
	}
	return nil
}

// IsJSON reports whether a media type is JSON: application/json, or any
// type with a +json suffix.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// failure is what Forward answers for an exchange that failed.
func (p *Proxy) failure(err error) error {
	if addr, ok := RefusedAddress(err); ok {
		return &refusal{addr: addr} // ErrNotAllowed, naming the address
	}
	if Refused(err) {
		return ErrNotAllowed
	}
	return answer.New(http.StatusBadGateway, "Upstream unreachable: "+p.why(err))
}

// why says, briefly, why an upstream could not be reached.
func (p *Proxy) why(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %s", p.cfg.Timeout)
	case errors.Is(err, context.Canceled):
		return "the request was canceled"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "no such host " + dnsErr.Name
		}
		return "cannot resolve " + dnsErr.Name
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before an answer"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		err = opErr.Err
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
