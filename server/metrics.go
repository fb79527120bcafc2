package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	panics   prometheus.Counter

	sharedErrors *prometheus.CounterVec
	cacheTrusted prometheus.Gauge
	// cacheEvictions counts mocks dropped from memory to stay within
	// --max-cache-bytes.
	cacheEvictions prometheus.Counter
	handler        http.Handler

	// children holds the series of each route and status seen, found
	// once: looking them up by label values hashes the labels on every
	// request. A handful of routes and statuses: bounded.
	children sync.Map // routeStatus → *routeSeries
}

type routeStatus struct {
	route  string
	status int
}

type routeSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// Reasons a read request is refused, as the refusals metric labels them.
const (
	refusedRateLimit    = "rate_limit"
	refusedQuota        = "quota"
	refusedAuthFailures = "auth_failures"
	refusedClient       = "client"
	refusedSlowBody     = "slow_body"
)

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "decoy_http_requests_total",
			Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "decoy_http_request_duration_seconds",
			Help:    "HTTP request latency by route, including configured mock delays.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "decoy_refusals_total",
			Help: "Requests refused, by reason: rate_limit, quota, auth_failures, client (429); slow_body (408: a request body slower than --min-body-rate).",
		}, []string{"reason"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "decoy_panics_total",
			Help: "Panics recovered while serving requests.",
		}),
		sharedErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "decoy_shared_fallbacks_total",
			Help: "Times a shared backend failed and the server went on alone, by use: rate_limit and auth_failures (Redis; limited per replica), quota (Redis; counted in the store alone), invalidation (Redis; changes announced late or cache revalidated), store (database; a cached mock served unchecked).",
		}, []string{"use"}),
		cacheTrusted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "decoy_cache_trusted",
			Help: "1 while cached mocks are served as they are, 0 while each read checks the store for changes made by other replicas.",
		}),
		cacheEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "decoy_cache_evictions_total",
			Help: "Mocks dropped from memory, least recently read first, to keep decoy_cache_bytes within --max-cache-bytes or decoy_cache_mapped_documents within --max-open-documents; the next read loads them again.",
		}),
	}
	m.cacheTrusted.Set(1)
	for _, u := range []string{"rate_limit", "auth_failures", "quota", "invalidation", "store"} {
		m.sharedErrors.WithLabelValues(u) // export zeros
	}
	for _, r := range []string{refusedRateLimit, refusedQuota, refusedAuthFailures, refusedClient, refusedSlowBody} {
		m.refusals.WithLabelValues(r) // export zeros
	}
	reg.MustRegister(m.requests, m.duration, m.refusals, m.panics, m.sharedErrors, m.cacheTrusted, m.cacheEvictions)
	// The process and Go collectors may be registered already by the caller.
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	key := routeStatus{route, status}
	v, ok := m.children.Load(key)
	if !ok {
		v, _ = m.children.LoadOrStore(key, &routeSeries{
			requests: m.requests.WithLabelValues(route, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(route),
		})
	}
	rs := v.(*routeSeries)
	rs.requests.Inc()
	rs.duration.Observe(d.Seconds())
}
