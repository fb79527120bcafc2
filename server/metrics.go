package server

import (
	"net/http"
	"strconv"
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
	handler  http.Handler
}

// Reasons a read request is refused, as the refusals metric labels them.
const (
	refusedRateLimit    = "rate_limit"
	refusedQuota        = "quota"
	refusedAuthFailures = "auth_failures"
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
			Help: "Read requests refused with 429, by reason (rate_limit, quota, auth_failures).",
		}, []string{"reason"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "decoy_panics_total",
			Help: "Panics recovered while serving requests.",
		}),
	}
	for _, r := range []string{refusedRateLimit, refusedQuota, refusedAuthFailures} {
		m.refusals.WithLabelValues(r) // export zeros
	}
	reg.MustRegister(m.requests, m.duration, m.refusals, m.panics)
	// The process and Go collectors may be registered already by the caller.
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}
