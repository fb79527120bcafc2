package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/spf13/cobra"
)

// healthTimeout bounds a health check; Docker's own timeout is longer.
const healthTimeout = 5 * time.Second

// healthcheckCommand asks the server that --addr and --tls-cert
// (DECOY_ADDR, DECOY_TLS_CERT, as for serve) describe for /healthz, and
// fails unless it answers 200. It is the container image's HEALTHCHECK:
// the image has no shell, curl or wget to do it with.
func healthcheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Check that decoy serve answers on --addr (the image's HEALTHCHECK)",
		Long: `Ask the server listening on --addr for /healthz, over HTTPS when --tls-cert
is set, and fail unless it answers 200 within 5 s. --addr and --tls-cert
are read from DECOY_ADDR and DECOY_TLS_CERT too, as decoy serve reads
them, so the same environment describes both.`,
		Example: "  decoy healthcheck\n  DECOY_ADDR=0.0.0.0:9000 decoy healthcheck",
		Args:    exactArgs(0, "no argument"),
	}
	fs := cmd.Flags()
	addr := fs.String("addr", "127.0.0.1:8080", "the address decoy serve listens on (an unspecified host is asked on loopback)")
	tlsCert := fs.String("tls-cert", "", "set when decoy serve serves HTTPS")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyEnv(cmd.Flags()); err != nil {
			return err
		}
		return healthcheck(cmd.Context(), *addr, *tlsCert != "", cmd.OutOrStdout())
	}
	return cmd
}

// healthcheck asks the server on addr for /healthz.
func healthcheck(ctx context.Context, addr string, https bool, stdout io.Writer) error {
	url, err := healthURL(addr, https)
	if err != nil {
		return err
	}
	hc := &http.Client{
		Timeout: healthTimeout,
		Transport: &http.Transport{
			Proxy: nil, // the server is this machine's
			// The check is that this machine's server answers; its
			// certificate names the public host, not the loopback
			// address asked.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %v", err) // not %w: the hint of the admin commands is not for this
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s", url, resp.Status)
	}
	fmt.Fprintln(stdout, "healthy:", url)
	return nil
}

// healthURL is the /healthz URL of a server listening on addr. A server
// listening on every address (0.0.0.0:8080, :8080) is asked on loopback.
func healthURL(addr string, https bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %w", addr, err)
	}
	if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if err == nil && ip.Is6() {
			host = "::1"
		}
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/healthz", nil
}
