package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/fallback"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/transport"
)

// exposedHeaders are the response headers a browser app may read.
const exposedHeaders = "X-Total-Count, ETag, Location, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Quota-Limit, X-Quota-Remaining, Decoy-Seed, Decoy-Rule"

// A read reaches a mock by its id (/mock/{id}) or through a project's route
// (§11, project.go). Finding the mock is the entry's own first stage; from
// there every read goes through the same stages, in the contract's order
// (§1.1 from step 3 on): authenticate, limitRate, the answer (over data
// generated now, for a mock whose template runs on every read), reserve
// the quota, the parameters' verdict, wait out the delay, write. A route's
// rules (§13.1, rules.go) answer instead when one holds, after the quota
// step.

// target is what a request reached: a mock, and what its route adds to the
// request's query. Nothing after the finding stage knows which way the
// request came.
type target struct {
	// e is the mock, with a reference its finder releases.
	e *mockcache.Entry
	// scope is what the route adds (zero for /mock/{id}).
	scope query.Scope
	// key tells apart, among the answers kept for one query string, those
	// of different scopes ("" for /mock/{id}).
	key string
	// rules are the route's rules (§13.1), nil when it has none (and for
	// /mock/{id}); routeID and params are what they count by and read.
	rules   *rule.Set
	routeID string
	params  []route.Param
	// write is the action of a route that writes (§12, write.go); ""
	// for a read. binding is what the route adds to its writes, prefix
	// the path the request reached the project under ("/p/{slug}", or ""
	// on its own host).
	write   string
	binding *mockcache.Binding
	prefix  string
	// keep is false when no answer of the target is kept.
	keep bool
}

// serveMock is GET /mock/{id} and GET /api/{id}. The checks run in the order
// of the contract; the first that fails answers and nothing after it runs.
func (s *Server) serveMock(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	s.setCORS(h, r)
	h["X-Content-Type-Options"] = valNosniff

	// 1. Method.
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		if isPreflight(r) {
			s.preflight(w, r, "GET, HEAD")
			return nil
		}
		fallthrough
	default:
		return answer.New(http.StatusMethodNotAllowed, "Invalid Method", "Allow", "GET, HEAD")
	}

	// 2. Id.
	id, ok := mockID(r.URL.Path)
	if !ok {
		return answer.ErrMockNotFound
	}
	e, err := s.cache.Get(r.Context(), id)
	if err != nil {
		return err
	}
	n := noteOf(w)
	n.project, n.mock = e.Mock.ProjectID, id
	// Its document is released, and unmapped if the cache dropped it
	// meanwhile, once the answer is written (or the request fails).
	defer e.Release()
	return s.read(w, r, target{e: e, keep: true})
}

// read answers a read of the mock t reached: steps 3 to 7 of §1.1, with
// the rules of t's route (§13.1) tried after the quota step.
func (s *Server) read(w http.ResponseWriter, r *http.Request, t target) error {
	e := t.e
	ctx := r.Context()
	rd := readState{t: t, cq: s.queries.Get(r.URL.RawQuery)}

	// 3. Authentication, for private mocks only.
	if e.Mock.Private {
		if err := s.authenticate(r, e, rd.cq.Params); err != nil {
			return err
		}
	}

	// 4. Rate limit.
	rd.quotaLimit = e.Mock.EffectiveMonthlyQuota(s.cfg.DefaultMonthlyQuota)
	rd.now = s.cfg.Now()
	rd.month = decoy.Month(rd.now)
	var err error
	if rd.rate, err = s.limitRate(ctx, w.Header(), e.Mock, rd.quotaLimit, rd.now); err != nil {
		return err
	}

	// Rules (rules.go): the first that holds answers, after the quota
	// step. Which one holds is worked out now, without I/O (a rule's
	// count is taken after that step), so that the quota step knows the
	// answer is a rule's.
	if t.rules != nil {
		re, first, err := s.matchRules(r, &rd)
		defer re.release()
		if err != nil {
			if forLoad(r, err) { // errBodiesBusy, for all bodies held
				s.undoRate(ctx, e.Mock.ID, rd.rate)
			}
			return err
		}
		if first >= 0 {
			return s.answerRules(w, r, &rd, re, first)
		}
		// No rule holds: what they built of the request goes, before a
		// write holds its record.
		re.letGo()
	}
	if t.write != "" {
		return s.writeRecords(w, r, &rd)
	}
	return s.readNormally(w, r, &rd, nil, nil)
}

// readState is what the stages of a read share once the mock is found.
type readState struct {
	t          target
	cq         *mockcache.Compiled
	rate       *decoy.RateResult // nil: the mock has no rate limit
	quotaLimit int64
	month      string
	now        time.Time
}

// readNormally gives the route's normal answer from the rate limit on:
// the answer (over data generated now, for a mock whose template runs on
// every read), the quota (step 5), the parameters' verdict (6), the delay
// and the answer (7).
//
// pre, when set, is the quota a rule that was to answer reserved (step 5
// done): it is given back when the answer is not a served one. over, when
// set, is a rule that answers with the route's normal body: its status,
// headers and delay replace the mock's, and the answer is never a 304.
func (s *Server) readNormally(w http.ResponseWriter, r *http.Request, rd *readState, pre *reservation, over *rule.Compiled) error {
	e, id := rd.t.e, rd.t.e.Mock.ID
	ctx := r.Context()
	na, err := s.normalAnswer(w, r, rd, over != nil)
	if err != nil {
		if pre != nil {
			s.release(ctx, *pre)
		}
		return err
	}
	defer na.done()
	a, qerr := na.a, na.err

	// 5. Monthly quota. Only answers that return the data count, so a
	// request about to fail its parameters, HEAD and a 304 only look; any
	// other reserves a served response.
	reserve := qerr == nil && r.Method != http.MethodHead && !a.NotModified
	var reserved reservation
	if pre != nil {
		if reserved = *pre; !reserve {
			s.release(ctx, reserved)
			reserved = reservation{}
		}
	} else if reserved, err = s.reserve(ctx, w.Header(), e.Mock, rd.rate, rd.quotaLimit, rd.month, rd.now, reserve); err != nil {
		return err
	}

	if over != nil {
		setRuleHeaders(w.Header(), over.Rule.Headers)
	}
	// 6. Query parameters (and, for an item route, its record).
	if qerr != nil {
		if over != nil && over.Rule.Status != nil {
			_, msg, header := answer.Of(qerr)
			return &answer.Error{Status: *over.Rule.Status, Msg: msg, Header: header}
		}
		return qerr
	}

	// 7. Delay, then the answer.
	delay := e.Mock.DelayMS
	if over != nil {
		delay = ruleDelay(over.Rule, e.Mock)
		if st := over.Rule.Status; st != nil {
			a.Status = *st
		}
	}
	if delay > 0 {
		s.wait(ctx, time.Duration(delay)*time.Millisecond, reserved)
	}
	s.cfg.Usage.Served(id, rd.now)
	s.write(w, r, na.e, a)
	return nil
}

// normal is a read's normal answer, worked out: the answer, or the error
// of the request's parameters (or of a template that failed) to give
// instead. e is the entry it is made from: the mock's, or one of data
// generated now, which release releases. done releases both.
type normal struct {
	e       *mockcache.Entry
	a       mockcache.Answer
	err     error
	release func()
}

// normalAnswer works out the normal answer of a read, writing nothing but
// the Decoy-Seed header of generated data. It fails only for the server's
// sake (too busy to generate), having given back the rate-limit slot.
// Without conditional, If-None-Match is not looked at (no 304).
func (s *Server) normalAnswer(w http.ResponseWriter, r *http.Request, rd *readState, unconditional bool) (normal, error) {
	t, e := &rd.t, rd.t.e
	na := normal{e: e, release: noRelease}
	if t.write != "" {
		na.err = errWriteNotServed(t.write)
		return na, nil
	}
	// A mock whose template runs on every read answers over data
	// generated now, in an entry of its own: from here on, it is served as
	// stored data is. A template that fails is answered at step 6, as
	// parameters that do.
	key := ""
	if t.keep {
		key = r.URL.RawQuery + t.key
	}
	if e.Mock.TemplateMode == decoy.TemplateAlways {
		ge, err := s.generateNow(w, r, e)
		if refused(err) { // the server's load, not the client's doing
			s.undoRate(r.Context(), e.Mock.ID, rd.rate)
			return na, err
		}
		if err != nil {
			na.err = err
			return na, nil
		}
		na.e, na.release = ge, ge.Release
		key = "" // an answer of one seed is not kept
	}
	if rd.cq.Params.AuthToken != "" {
		key = "" // never kept
	}
	// The answer is worked out before the quota step, so that one that
	// will be a 304 never reserves quota; after the rate limit, so that
	// refused requests stay cheap.
	q, err := t.query(na.e, rd.cq)
	if err != nil {
		na.err = err
		return na, nil
	}
	inm := headerValue(r.Header, "If-None-Match")
	if unconditional {
		inm = ""
	}
	na.a = na.e.Answer(q, key, acceptsGzip(headerValue(r.Header, "Accept-Encoding")), inm)
	if na.a.NotFound {
		na.err = errRecordNotFound
	}
	if r.Method == http.MethodHead {
		na.a.Release() // no body is sent: its files are not held through the quota step and the delay
	}
	return na, nil
}

func noRelease() {}

// done releases what the normal answer holds, once written or not to be:
// its answer's files and the entry of data generated now.
func (na *normal) done() {
	na.a.Release()
	na.release()
}

// errRecordNotFound answers an item route that finds no record (§11.4).
var errRecordNotFound = answer.New(http.StatusNotFound, "Not found")

// query returns the query a read of e runs: the request's own, narrowed by
// what the route adds; nil when none applies (the data, at the route's
// items, is not an array, and is answered unchanged); or the error of the
// request's parameters, which an item route ignores.
func (t *target) query(e *mockcache.Entry, cq *mockcache.Compiled) (*query.Query, error) {
	if _, ok := e.Records(t.scope.Items); !ok {
		return nil, nil
	}
	if t.scope.One {
		return query.Item(t.scope), nil
	}
	if cq.Err != nil {
		return nil, cq.Err
	}
	return cq.Query.Within(t.scope), nil
}

// generateNow returns an entry of data generated now for mock e, whose
// template runs on every read, from the seed the request asks for (or a
// new one), and sets the Decoy-Seed header. The caller releases it.
func (s *Server) generateNow(w http.ResponseWriter, r *http.Request, e *mockcache.Entry) (*mockcache.Entry, error) {
	seed, err := generate.ParseSeed(r.Header.Get(generate.SeedHeader))
	if err != nil {
		return nil, err
	}
	w.Header()[generate.SeedHeader] = one(strconv.FormatUint(seed, 10))
	return s.generated(r, e, seed)
}

// limitRate admits the read against the mock's rate limit (step 4): the
// result, for the headers, or nil when the mock has no limit; a 429 when
// the window is full.
func (s *Server) limitRate(ctx context.Context, h http.Header, m *decoy.Mock, quotaLimit int64, now time.Time) (*decoy.RateResult, error) {
	rateLimit := m.EffectiveRateLimit(s.cfg.DefaultRateLimit)
	if rateLimit <= 0 {
		return nil, nil
	}
	res, err := s.cfg.Limiter.Allow(ctx, decoy.RateKey(m.ID), rateLimit)
	if err != nil {
		return nil, err
	}
	if !res.Allowed {
		qctx, cancel := s.quotaContext(ctx, false)
		used, err := s.cfg.Quota.QuotaUsed(qctx, m.ID, decoy.Month(now))
		cancel()
		if err != nil {
			// Only a header needs the count; the answer is a 429 anyway.
			s.log.Warn("quota count unavailable", "mock", m.ID, "err", err)
		}
		s.limitHeaders(h, &res, quotaLimit, used)
		s.metrics.refusals.WithLabelValues(refusedRateLimit).Inc()
		s.cfg.Usage.Refused(m.ID, now)
		return nil, answer.New(http.StatusTooManyRequests, "Rate limit exceeded. Maximum "+strconv.FormatInt(rateLimit, 10)+" requests per minute.",
			"Retry-After", seconds(res.RetryAfter))
	}
	return &res, nil
}

// reservation is what a read reserved of the monthly quotas, to give back
// if it is not served after all.
type reservation struct {
	mock      string // the mock's id, when its quota was reserved
	workspace string // the workspace's id, when its reads were
	month     string
}

// reserve is step 5: when reserve is set, it counts one served response
// against the mock's monthly quota and its workspace's monthly reads;
// otherwise it only looks. It sets the rate-limit and quota headers, and
// refuses past either quota with a 429 (giving back the rate-limit slot).
// The reservation is not tied to the client: once the store has counted
// it, the server must know.
func (s *Server) reserve(ctx context.Context, h http.Header, m *decoy.Mock, rate *decoy.RateResult, quotaLimit int64, month string, now time.Time, reserve bool) (reservation, error) {
	id := m.ID
	var used int64
	var served bool
	var err error
	if reserve {
		qctx, cancel := s.quotaContext(ctx, true)
		used, served, err = s.cfg.Quota.ReserveQuota(qctx, id, month, quotaLimit)
		cancel()
	} else {
		qctx, cancel := s.quotaContext(ctx, false)
		used, err = s.cfg.Quota.QuotaUsed(qctx, id, month)
		cancel()
		served = quotaLimit == 0 || used < quotaLimit
	}
	if code := decoy.ErrorCode(err); (code == decoy.EUNAVAILABLE || code == decoy.ENOSPACE) && ctx.Err() == nil {
		// Nowhere to count (the database, and Redis if any, are down; or
		// the disk the counts are written to is full).
		if quotaLimit == 0 || !reserve {
			// Nothing to count against, or nothing to count: serve.
			s.SharedFailed("quota", err)
			used, served, reserve, err = 0, true, false, nil
		} else {
			// Serving uncounted could exceed the quota: refuse. A 503
			// even for a full disk: the read asked nothing to be stored,
			// and it is the answer a client or balancer retries elsewhere.
			if s.firstFailure("quota refusal") {
				s.log.Warn("quota cannot be counted; refusing the reads that would be", "mock", id, "err", err)
			}
			msg := "The monthly quota of this mock cannot be counted right now; try again later"
			if code == decoy.ENOSPACE {
				msg = "The monthly quota of this mock cannot be counted: the server's disk is full; try again later"
			}
			err = decoy.Errorf(decoy.EUNAVAILABLE, "%s", msg)
		}
	}
	if err != nil {
		s.undoRate(ctx, id, rate)
		return reservation{}, err
	}
	if !served {
		// Refused with 429, so the request gives back its rate-limit slot.
		s.undoRate(ctx, id, rate)
		s.limitHeaders(h, rate, quotaLimit, used)
		return reservation{}, s.quotaExceeded(id, now)
	}
	res := reservation{month: month}
	if reserve {
		res.mock = id
	}
	// The monthly reads of the mock's workspace, counted the same way.
	wsReserved, wsLimit, wsUsed, err := s.reserveWorkspaceRead(ctx, m.WorkspaceID, month, reserve)
	if err != nil {
		s.release(ctx, res)
		s.undoRate(ctx, id, rate)
		if decoy.ErrorCode(err) == decoy.ERATELIMIT {
			// The quota headers are the workspace's, which refused.
			s.limitHeaders(h, rate, wsLimit, wsLimit)
			return reservation{}, s.quotaExceeded(id, now)
		}
		return reservation{}, err
	}
	if wsReserved {
		res.workspace = WorkspaceQuotaKey(m.WorkspaceID)
	}
	if wsLimit > 0 && quotaLimit > 0 && wsLimit-wsUsed < quotaLimit-used {
		// The quota headers say what runs out first: the workspace's
		// reads, here (a walkthrough saw 49,997 left on the read before
		// the workspace's 429). A mock with no quota has none (§1.6).
		quotaLimit, used = wsLimit, wsUsed
	}
	s.limitHeaders(h, rate, quotaLimit, used)
	return res, nil
}

// quotaExceeded counts a read of mock id refused for a monthly quota and
// returns its 429.
func (s *Server) quotaExceeded(id string, now time.Time) error {
	s.metrics.refusals.WithLabelValues(refusedQuota).Inc()
	s.cfg.Usage.Refused(id, now)
	return answer.New(http.StatusTooManyRequests, "Monthly request quota exceeded", "Retry-After", seconds(decoy.MonthEnd(now).Sub(now)))
}

// release gives back what a read reserved and did not serve.
func (s *Server) release(ctx context.Context, res reservation) {
	if res.mock != "" {
		s.releaseQuota(ctx, res.mock, res.month)
	}
	if res.workspace != "" {
		s.releaseQuota(ctx, res.workspace, res.month)
	}
}

// wait waits out a mock's delay (step 7). When the client goes away
// meanwhile, what was reserved is given back and the request is aborted:
// nothing must be written, for returning would let net/http send an empty
// 200 to a client that may still be reading (one that half-closed, say).
// Aborting closes the connection.
func (s *Server) wait(ctx context.Context, d time.Duration, reserved reservation) {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		s.release(ctx, reserved)
		panic(http.ErrAbortHandler)
	}
}

// Header values of every answer, shared: set by map assignment under
// their canonical (or, for ETag and X-RateLimit-*, exact) names, they cost
// no allocation. Each slice is full, so an Add appends to a copy.
var (
	valNosniff        = []string{"nosniff"}
	valAny            = []string{"*"}
	valExposed        = []string{exposedHeaders}
	valNoCache        = []string{"no-cache"}
	valPrivateNoCache = []string{"private, no-cache"}
	valVary           = []string{"Accept-Encoding"}
)

// gatherMin is the smallest body gathered with its head: net/http sends a
// head and a body that fit its 4 KiB buffer in one write.
const gatherMin = 3 << 10

// one returns v as a header value.
func one(v string) []string { return []string{v} }

// values hands out header values of one string each from one array: one
// allocation for the headers of an answer, not one each. Each value is
// capped at its length, so that an Add to it allocates rather than write
// over the next.
type values []string

func (v *values) one(s string) []string {
	if len(*v) == 0 {
		return one(s)
	}
	(*v)[0] = s
	r := (*v)[:1:1]
	*v = (*v)[1:]
	return r
}

// quotaTimeout bounds each quota call of a read: a stalled database or
// Redis must not hold reads that can be answered from memory.
const quotaTimeout = 2 * time.Second

// quotaContext returns the context of a quota call: detached from the
// client when the call must finish whatever the client does, and bounded
// by quotaTimeout unless the counter counts in memory.
func (s *Server) quotaContext(ctx context.Context, detached bool) (context.Context, context.CancelFunc) {
	if s.cfg.QuotaInMemory {
		if detached {
			return context.Background(), noCancel
		}
		return ctx, noCancel
	}
	if detached {
		ctx = context.WithoutCancel(ctx)
	}
	return context.WithTimeout(ctx, quotaTimeout)
}

func noCancel() {}

// releaseQuota takes back a reservation of id (a mock's or a workspace's)
// whose response was not served.
func (s *Server) releaseQuota(ctx context.Context, id, month string) {
	qctx, cancel := s.quotaContext(ctx, true)
	defer cancel()
	if err := s.cfg.Quota.ReleaseQuota(qctx, id, month); err != nil {
		s.log.Error("release quota", "id", id, "err", err)
	}
}

// mockID returns the lowercase UUID of a /mock/ or /api/ path.
func mockID(path string) (string, bool) {
	_, rest, ok := strings.Cut(path[1:], "/")
	if !ok {
		return "", false
	}
	return decoy.CanonicalID(rest)
}

// authenticate checks the token of a private mock: nil when the request
// may go on.
func (s *Server) authenticate(r *http.Request, e *mockcache.Entry, p query.Params) error {
	key := s.authKey(r)
	if err := s.authBlocked(r, key); err != nil {
		return err
	}
	token := s.token(r, p)
	if token == "" {
		return answer.New(http.StatusUnauthorized, "Auth token not found")
	}
	if secret.Matches(token, e.Mock.TokenHash) {
		return nil
	}
	return s.authFailed(r, key, answer.New(http.StatusUnauthorized, "Invalid auth token"))
}

// authBlocked returns a 429 when the client behind key failed to
// authenticate too often in the last minute. Until that window frees, even
// a right token is refused, so guessing reveals nothing.
func (s *Server) authBlocked(r *http.Request, key string) error {
	if s.cfg.AuthFailureLimit <= 0 {
		return nil
	}
	st, ok, err := peekClient(r.Context(), s.cfg.AuthFailures, s.authWindows(key))
	if err != nil {
		return err
	}
	if !ok {
		return s.tooManyFailures(freesIn(st))
	}
	return nil
}

// authFailed counts a wrong token for key and returns refusal, or a 429
// when this failure is past the limit.
func (s *Server) authFailed(r *http.Request, key string, refusal *answer.Error) error {
	if s.cfg.AuthFailureLimit > 0 {
		res, _, err := s.allowClient(r.Context(), s.cfg.AuthFailures, s.authWindows(key))
		if err != nil {
			return err
		}
		if !res.Allowed {
			return s.tooManyFailures(freesIn(res))
		}
	}
	return refusal
}

// authWindows returns the windows a failed authentication of the client
// behind key (authKey) counts in: the client's, and an IPv6 client's /48
// and /32 (clientWindows).
func (s *Server) authWindows(key string) []clientWindow {
	return clientWindows(authPrefix, strings.TrimPrefix(key, authPrefix), s.cfg.AuthFailureLimit)
}

func (s *Server) tooManyFailures(retry time.Duration) error {
	s.metrics.refusals.WithLabelValues(refusedAuthFailures).Inc()
	return answer.New(http.StatusTooManyRequests, "Too many failed authentication attempts", "Retry-After", seconds(max(retry, time.Second)))
}

// token returns the mock token of a request: the first non-empty token
// header, else a bearer token (bearerToken), else the auth_token
// parameter.
func (s *Server) token(r *http.Request, p query.Params) string {
	for _, key := range s.tokenHeaderKeys {
		if v := headerValue(r.Header, key); v != "" {
			return v
		}
	}
	if v := s.bearerToken(r); v != "" {
		return v
	}
	return p.AuthToken
}

func (s *Server) undoRate(ctx context.Context, id string, rate *decoy.RateResult) {
	if rate == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.cfg.Limiter.Undo(ctx, decoy.RateKey(id), *rate); err != nil {
		if !errors.Is(err, fallback.ErrSharedDown) {
			s.log.Error("undo rate-limit event", "mock", id, "err", err)
		}
		return
	}
	// Read the window again: the headers describe it without this request.
	if now, err := s.cfg.Limiter.Peek(ctx, decoy.RateKey(id), rate.Limit); err == nil {
		*rate = now
	}
}

// limitHeaders sets the rate-limit and quota headers; a limit that is not
// set leaves its headers out.
func (s *Server) limitHeaders(h http.Header, rate *decoy.RateResult, quotaLimit, quotaUsed int64) {
	if rate == nil && quotaLimit <= 0 {
		return
	}
	vs := make(values, 5)
	if rate != nil {
		h["X-RateLimit-Limit"] = vs.one(strconv.FormatInt(rate.Limit, 10))
		h["X-RateLimit-Remaining"] = vs.one(strconv.FormatInt(max(rate.Remaining, 0), 10))
		h["X-RateLimit-Reset"] = vs.one(seconds(rate.Reset))
	}
	if quotaLimit > 0 {
		h["X-Quota-Limit"] = vs.one(strconv.FormatInt(quotaLimit, 10))
		h["X-Quota-Remaining"] = vs.one(strconv.FormatInt(max(quotaLimit-quotaUsed, 0), 10))
	}
}

// setCORS sets the CORS headers of every answer on the read endpoint.
func (s *Server) setCORS(h http.Header, r *http.Request) {
	origin := headerValue(r.Header, "Origin")
	switch {
	case s.corsAny:
		h["Access-Control-Allow-Origin"] = valAny
	case origin != "" && s.corsOrigins[origin]:
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
	default:
		h.Add("Vary", "Origin")
		return
	}
	h["Access-Control-Expose-Headers"] = valExposed
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// preflight answers a CORS preflight request, allowing methods.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request, methods string) {
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", strings.Join(append([]string{"If-None-Match", generate.SeedHeader, "Authorization"}, s.tokenHeaders...), ", "))
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// write sets the headers of an answer and writes it.
func (s *Server) write(w http.ResponseWriter, r *http.Request, e *mockcache.Entry, a mockcache.Answer) {
	h := w.Header()
	h["Date"] = s.dates.now()
	if e.Mock.Private {
		h["Cache-Control"] = valPrivateNoCache
	} else {
		h["Cache-Control"] = valNoCache
	}
	if v, ok := h["Vary"]; ok {
		h["Vary"] = append(v, "Accept-Encoding")
	} else {
		h["Vary"] = valVary
	}
	vs := make(values, 3)
	if a.Total >= 0 {
		h["X-Total-Count"] = vs.one(strconv.Itoa(a.Total))
	}
	if a.ETag != "" {
		h["ETag"] = vs.one(a.ETag)
	}
	if a.NotModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = e.ContentType
	if e.Doc == nil {
		// Stored content that is not JSON (HTML, say) must not run scripts
		// in the service's origin.
		h.Set("Content-Security-Policy", "sandbox")
	}
	if a.Gzip {
		h.Set("Content-Encoding", "gzip")
	}
	if a.Length >= 0 {
		h["Content-Length"] = vs.one(strconv.Itoa(a.Length))
	}
	if body := a.Bytes(); len(body) >= gatherMin && len(body) <= transport.MaxGather && r.ProtoMajor == 1 {
		// Head and body in one write (see transport.Gather): a body held
		// in memory, which does not change until it is sent. A smaller
		// answer leaves net/http's buffer in one write anyway.
		g := transport.Gather(r.Context())
		defer func() {
			_ = http.NewResponseController(w).Flush()
			_ = g.Send()
		}()
	}
	w.WriteHeader(a.Status)
	if r.Method != http.MethodHead {
		a.WriteBody(w)
	}
}

// dates is the Date header of answers, formatted once a second rather than
// by net/http for each answer, as nginx does.
type dates struct{ last atomic.Pointer[date] }

type date struct {
	unix  int64
	value []string
}

// now returns the Date header value of the current second.
func (d *dates) now() []string {
	t := time.Now()
	if v := d.last.Load(); v != nil && v.unix == t.Unix() {
		return v.value
	}
	v := &date{unix: t.Unix(), value: []string{t.UTC().Format(http.TimeFormat)}}
	d.last.Store(v)
	return v.value
}

// headerValue is h.Get(key) for a key in canonical form, as net/http keeps
// a request's: a lookup alone, where Get first puts the key in canonical
// form (a copy, for a name in lower case), on every read.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip (named,
// or through "*", with a q-value above zero).
func acceptsGzip(header string) bool {
	if header == "" {
		return false
	}
	star := false
	// Cut, not Split, and EqualFold, not ToLower: nothing allocated on
	// a read's path.
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if !strings.EqualFold(name, "gzip") && !strings.EqualFold(name, "x-gzip") && name != "*" {
			continue
		}
		ok := true
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if qv, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && qv <= 0 {
					ok = false
				}
			}
		}
		if name == "*" {
			star = ok
			continue
		}
		return ok
	}
	return star
}
