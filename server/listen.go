package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/transport"
)

// MaxHeaderBytes caps the request line and headers of a request.
const MaxHeaderBytes = 64 << 10

// headerSlack is what net/http reads of a head past the http.Server's
// MaxHeaderBytes before it answers 431 (its "bufio slop"): the server's
// setting is MaxHeaderBytes less it, so that the cap is MaxHeaderBytes.
const headerSlack = 4 << 10

const (
	// startTimeout bounds the store calls of Open.
	startTimeout             = 30 * time.Second
	defaultReadHeaderTimeout = 10 * time.Second
	defaultShutdownTimeout   = 35 * time.Second
	// writeTimeout bounds the writing of an answer: a response delay of
	// up to 30 s, then a large document to a slow client.
	writeTimeout = 2 * time.Minute
)

// Open listens on the configured address and serves there until Close:
// behind the connection caps, with net/http's own error answers rewritten
// as JSON errors, over TLS when a certificate is configured (see package
// transport). A certificate that cannot be read is an error here.
func (s *Server) Open() error {
	var cert *transport.Certificate
	if s.cfg.TLSCert != "" || s.cfg.TLSKey != "" {
		var err error
		if cert, err = transport.LoadCertificate(s.cfg.TLSCert, s.cfg.TLSKey, s.log); err != nil {
			return err
		}
	}
	if s.studio != nil {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		n, err := s.studio.EndStaleSessions(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("end the Studio sessions of another admin token: %w", err)
		}
		if n > 0 {
			s.log.Info("ended the Studio sessions of another admin token", "sessions", n)
		}
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	headerTimeout := s.cfg.ReadHeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = defaultReadHeaderTimeout
	}
	s.ln = ln
	s.http = &http.Server{
		Handler: s,
		// A client that sends its headers slowly is cut. A body is held
		// to a floor rate instead (body.go), which sets the read deadline
		// as it is read; ReadTimeout stays as a bound where that cannot
		// be done. The answer may take writeTimeout, from the head or
		// once a body is in.
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes - headerSlack,
		ErrorLog:          log.New(errorLog{s.log}, "", 0),
		ConnContext:       transport.ConnContext,
	}
	limits := transport.ConnLimits{Total: s.cfg.MaxConns, PerClient: s.cfg.MaxClientConns, Exempt: s.trusted, Header: s.connHeader()}
	if cert != nil {
		limits.TLS = cert.TLSConfig()
	}
	var l net.Listener = transport.LimitConnections(transport.SendBuffer(ln, transport.SendBufferSize), limits)
	if limits.TLS != nil {
		// Offering "h2", it tells Serve to set up HTTP/2. A copy, since
		// setting it up writes to it.
		s.http.TLSConfig = limits.TLS.Clone()
		// The handshake gets the time a request's head gets.
		l = transport.TLS(l, limits.TLS, headerTimeout, MaxHeaderBytes, limits.Header...)
	} else {
		l = transport.JSONErrors(l, MaxHeaderBytes, limits.Header...)
	}
	// The live feeds of the request journal end as the server starts to
	// stop, rather than hold it for the shutdown timeout.
	s.http.RegisterOnShutdown(s.admin.EndStreams)
	s.serving = make(chan error, 1)
	go func() { s.serving <- s.http.Serve(l) }()
	return nil
}

// Addr returns the address Open listens on, or nil before Open.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting connections and lets the requests in flight finish,
// for at most the shutdown timeout; requests still running then (a client
// reading a large answer very slowly, say) are cut.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.close()
		s.admin.Close()
		s.proxy.Close()
	})
	return s.closeErr
}

func (s *Server) close() error {
	if s.http == nil {
		return nil
	}
	timeout := s.cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = defaultShutdownTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		s.log.Warn("connections still open after the shutdown timeout; closing them", "timeout", timeout)
		s.http.Close()
	}
	if err := <-s.serving; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// errorLog is net/http's error log. A TLS handshake that fails is the
// client's doing (plain HTTP sent to the HTTPS port, a client that does not
// trust the certificate, a scanner): on a server open to the internet it
// comes from anyone, so it is an Info line, as a request is. Anything else
// net/http reports is a Warn.
type errorLog struct{ log *slog.Logger }

// clientErrors are the beginnings of net/http's lines about a client's
// failed handshake, over HTTP/1.x and HTTP/2.
var clientErrors = []string{"http: TLS handshake error", "http2: server: error reading preface"}

func (e errorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	for _, prefix := range clientErrors {
		if strings.HasPrefix(msg, prefix) {
			level = slog.LevelInfo
		}
	}
	e.log.Log(context.Background(), level, msg)
	return len(p), nil
}
