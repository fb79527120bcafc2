package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/decoy-mock/decoy/client"
)

// Exit codes, as docs/cli.md and decoy --help document them.
const (
	exitOK    = 0 // done
	exitError = 1 // the command ran and failed: the server refused, is down, a file is missing
	exitUsage = 2 // the command line could not be understood
)

// errUsage marks a command line that could not be understood; it exits 2.
var errUsage = errors.New("usage")

// usageError is a command line that could not be understood: what was
// wrong, and the command whose --help says how it goes.
type usageError struct {
	msg string
	cmd string // "decoy mock create"; set by run
	// quiet is set when the help was printed already.
	quiet bool
}

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == errUsage }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	}
	return exitError
}

// report prints err, if any, as one line that says what to do (and, for a
// usage error, a second line pointing at --help), and returns the exit
// code.
func report(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if !ue.quiet {
			fmt.Fprintln(w, "decoy:", ue.msg)
			cmd := ue.cmd
			if cmd == "" {
				cmd = "decoy"
			}
			fmt.Fprintf(w, "Run '%s --help' for usage.\n", cmd)
		}
		return exitUsage
	}
	fmt.Fprintln(w, "decoy:", errorLine(err))
	return exitCode(err)
}

// errorLine is the one line an error is shown as: an answer of the server
// with its status and what to do about it, a server that cannot be
// reached, or the error's own text.
func errorLine(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		line := ae.Error()
		switch ae.Status {
		case 401:
			line += ` — run "decoy login", or pass --admin-token (DECOY_ADMIN_TOKEN)`
		case 403:
			if strings.HasPrefix(ae.Message, "Workspace limit reached") {
				line += " — a server admin can raise it (decoy workspace limits)"
			}
		case 413:
			if strings.Contains(ae.Message, "max_bytes") {
				line += " — a server admin can raise it (decoy workspace limits)"
			} else {
				line += " — the server takes documents up to its --max-data-bytes"
			}
		}
		// A message the command wrapped (mock X created, but ...) keeps its
		// words.
		if full := err.Error(); full != ae.Error() {
			line = strings.TrimSuffix(full, ae.Error()) + line
		}
		return line
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		server := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			server = u.Scheme + "://" + u.Host
		}
		var dnse *net.DNSError
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return fmt.Sprintf(`cannot reach %s: connection refused — is "decoy serve" running there? (--server, DECOY_SERVER)`, server)
		case errors.As(err, &dnse):
			return fmt.Sprintf(`cannot reach %s: no such host %s — check --server (DECOY_SERVER)`, server, dnse.Name)
		case ue.Timeout():
			return fmt.Sprintf(`cannot reach %s: no answer in time — is "decoy serve" running there? (--server, DECOY_SERVER)`, server)
		}
		why := ue.Err.Error()
		var oe *net.OpError
		if errors.As(err, &oe) {
			why = oe.Err.Error()
		}
		return fmt.Sprintf("cannot reach %s: %s", server, why)
	}
	return err.Error()
}

var flagPrefix = regexp.MustCompile(`^invalid argument "[^"]*" for "[^"]*" flag: `)

// valueProblem is what is wrong with a flag's value, without the flag's
// name: "not a number".
func valueProblem(err error) string {
	msg := flagPrefix.ReplaceAllString(err.Error(), "")
	return strings.TrimPrefix(cleanNumberError(msg), ": ")
}

var strconvNoise = regexp.MustCompile(`(?:^|: )strconv\.Parse(\w+): parsing "[^"]*": (invalid syntax|value out of range)$`)

// flagError makes an error of flag parsing a usage error, in words: the
// strconv details of a number that is not one say nothing more.
func flagError(err error) error {
	msg := strings.Replace(cleanNumberError(err.Error()), "invalid argument", "invalid value", 1)
	return usagef("%s", msg)
}

// cleanNumberError replaces strconv's words about a number that is not
// one with plain ones.
func cleanNumberError(msg string) string {
	if m := strconvNoise.FindStringSubmatch(msg); m != nil {
		what := "not a number"
		switch {
		case m[1] == "Bool":
			what = "not true or false" // a walkthrough read "not a number" of DECOY_STUDIO=maybe
		case m[2] == "value out of range":
			what = "out of range"
		}
		return strconvNoise.ReplaceAllString(msg, ": "+what)
	}
	return msg
}
