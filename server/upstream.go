package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/admin"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/studio"
	"github.com/decoy-mock/decoy/upstream"
)

// This file is a project's pass-through and recording (§14 of the
// contract). In mode passthrough, a request that matches no route goes to
// the project's upstream, and its answer comes back; in mode record,
// every request does, and each GET answer with a JSON body is kept as a
// mock with a route at its path (admin.API.Record). Forwarded requests are
// journaled, marked as forwarded, with the route and mock a recording
// made. The proxy itself, and the check of upstreams' addresses at every
// connection, are package upstream's.

// maxRecordBytes bounds a recorded answer (and --max-data-bytes, when
// lower): a longer one is passed on whole but not kept, so that the
// answers being recorded at once hold little memory each.
const maxRecordBytes = 16 << 20

// recordTimeout bounds the writing of one recording, which goes on when
// the client has its answer and leaves.
const recordTimeout = 30 * time.Second

// allMethods are the methods a preflight for a forwarded path allows.
const allMethods = route.GET | route.POST | route.PUT | route.PATCH | route.DELETE

// newProxy is the server's proxy to upstreams.
func (s *Server) newProxy() *upstream.Proxy {
	return upstream.New(upstream.Config{
		Timeout:       s.cfg.UpstreamTimeout,
		Allow:         s.cfg.UpstreamAllow,
		TokenHeaders:  s.tokenHeaders,
		TokenPrefix:   admin.TokenPrefix,
		SessionCookie: studio.CookieName,
		Header:        http.Header{"Content-Security-Policy": {"sandbox"}, "X-Content-Type-Options": valNosniff},
	})
}

// serveUpstream answers a project's request through its upstream when the
// project's mode says so: done is false when the routes answer it.
func (s *Server) serveUpstream(w http.ResponseWriter, r *http.Request, pr *mockcache.ProjectRoutes, path string) (done bool, err error) {
	p := pr.Project
	switch {
	case p.Upstream == "" || p.Mode == decoy.ModeMock || p.Mode == "":
		return false, nil
	case p.Mode == decoy.ModePassthrough && pr.Table.Match(r.Method, path).Route != nil:
		return false, nil // a route wins
	case isPreflight(r):
		if p.Mode == decoy.ModePassthrough && pr.Table.Allowed(path) != 0 {
			return false, nil
		}
		// Answered here, with Decoy's CORS policy, as for a route: any
		// method may be passed on.
		s.preflightRoute(w, r, allMethods)
		return true, nil
	}
	return true, s.forward(w, r, pr, path)
}

// forward passes a request to the project's upstream, and in mode record
// keeps a GET's JSON answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, pr *mockcache.ProjectRoutes, path string) error {
	n := noteOf(w)
	n.forwarded = true
	base, err := upstream.ParseBase(pr.Project.Upstream)
	if err != nil {
		// Checked when set: only a store changed by hand holds one.
		return answer.New(http.StatusBadGateway, "Upstream unreachable: "+decoy.ErrorMessage(err))
	}
	// The upstream's answer brings its own (Forward sets Decoy's policy).
	delete(w.Header(), "X-Content-Type-Options")
	var c *upstream.Capture
	if pr.Project.Mode == decoy.ModeRecord && r.Method == http.MethodGet {
		c = &upstream.Capture{Limit: min(s.cfg.MaxDataBytes, maxRecordBytes), Keep: func(c *upstream.Capture) {
			s.keepRecording(r, pr.Project, path, c, n)
		}}
	}
	err = s.proxy.Forward(w, r, upstream.Target{Base: base, Path: path}, c)
	if addr, ok := upstream.RefusedAddress(err); ok && s.refusedUpstreams.due(pr.Project.ID+" "+addr, time.Now()) {
		// The client learns only that it is not allowed (§14); whoever
		// runs the server, where and how to allow it, once a minute for
		// each project and address, whatever its clients send.
		s.log.Warn("upstream address not allowed: not public; add its network to --upstream-allow to reach it",
			"project", pr.Project.ID, "address", addr)
	}
	return err
}

// onceAMinute tells which of a bounded number of keys are due to be
// logged again: each once a minute at most.
type onceAMinute struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// maxLogKeys bounds onceAMinute's keys: past it, every key starts afresh.
const maxLogKeys = 1024

// due reports whether key was not logged in the minute before now, and
// counts it as logged now if so.
func (o *onceAMinute) due(key string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := o.last[key]; ok && now.Sub(t) < time.Minute {
		return false
	}
	if o.last == nil || len(o.last) >= maxLogKeys {
		o.last = make(map[string]time.Time)
	}
	o.last[key] = now
	return true
}

// minCredential is the shortest credential looked for in an answer: a
// shorter value would be found in answers by chance.
const minCredential = 6

// credentialIn returns the name of a credential of r (Authorization, a
// cookie, a token header, auth_token) whose value body holds, byte for
// byte or, in a JSON body, in a string however it is escaped there
// ("\u0026" for "&", "\/" for "/"); "" when it holds none.
func (s *Server) credentialIn(r *http.Request, body []byte) string {
	type credential struct{ name, value string }
	var creds []credential
	add := func(name, v string) {
		if len(v) >= minCredential {
			creds = append(creds, credential{name, v})
		}
	}
	for name, values := range r.Header {
		if !s.secretHeader(name) {
			continue
		}
		for _, v := range values {
			switch {
			case strings.EqualFold(name, "Cookie"):
				for _, c := range strings.Split(v, ";") {
					_, value, _ := strings.Cut(c, "=")
					add(name, strings.TrimSpace(value))
				}
				continue
			case strings.Contains(v, " "):
				_, cred, _ := strings.Cut(v, " ")
				add(name, strings.TrimSpace(cred))
			}
			add(name, v)
		}
	}
	add("auth_token", r.URL.Query().Get("auth_token"))
	for _, c := range creds {
		if bytes.Contains(body, []byte(c.value)) {
			return c.name
		}
	}
	if len(creds) == 0 || !bytes.Contains(body, []byte{'\\'}) {
		return "" // nothing escaped: the bytes were the strings
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "" // the end, or not JSON: its bytes were looked at
		}
		if str, ok := tok.(string); ok {
			for _, c := range creds {
				if strings.Contains(str, c.value) {
					return c.name
				}
			}
		}
	}
}

// keepRecording keeps a captured answer as a mock with a route at its
// path, before the answer is passed on. A recording refused (a
// workspace's limit reached, a path that is no route's, an answer that
// echoes a credential of the request) is logged: the client gets the
// upstream's answer all the same.
func (s *Server) keepRecording(r *http.Request, p *decoy.Project, path string, c *upstream.Capture, n *journalNote) {
	if secret := s.credentialIn(r, c.Body); secret != "" {
		// An answer that echoes the request (a debugging endpoint)
		// would keep its credentials in the mock.
		s.log.Warn("answer not recorded: it holds a credential of the request", "project", p.ID,
			"path", admin.RedactPath(path), "header", secret)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	rec, err := s.admin.Record(ctx, admin.Recording{ProjectID: p.ID, Path: path, Status: c.Status, ContentType: c.ContentType, Body: c.Body,
		Client: s.clientAddr(r)})
	if err != nil {
		s.log.Warn("answer not recorded", "project", p.ID, "path", admin.RedactPath(path), "err", err)
		return
	}
	n.route, n.mock = rec.RouteID, rec.MockID
}
