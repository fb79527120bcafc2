// Command decoy is the Decoy mock-data server and its command-line client.
//
//	decoy serve [flags]          run the server
//	decoy mock COMMAND [flags]   manage mocks through the admin API
//	decoy login, logout          sign in with email and password
//	decoy user|workspace|project|member|key|audit ...  manage teams (§6)
//	decoy healthcheck            check that the server answers (the image's HEALTHCHECK)
//	decoy version                print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "decoy:", err)
		}
		os.Exit(exitCode(err))
	}
}

const usage = `Decoy serves JSON mock data over HTTP.

Usage:
  decoy serve [flags]            run the server (decoy serve -h for flags)
  decoy mock COMMAND [flags]     manage mocks through the admin API (decoy mock -h)
  decoy login | logout           sign in with email and password (stores a personal token)
  decoy user|workspace|project|member|key COMMAND, decoy audit
                                 manage people, workspaces, projects, members, keys (decoy key -h)
  decoy healthcheck              check that decoy serve answers on --addr (the image's HEALTHCHECK)
  decoy version                  print the version
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		m := NewMain(stdout, stderr)
		if err := m.ParseFlags(args[1:]); err != nil {
			return err
		}
		if err := m.Run(ctx); err != nil {
			m.Close()
			return err
		}
		<-ctx.Done()
		return m.Close()
	case "mock":
		return runMock(ctx, args[1:], stdin, stdout, stderr)
	case "login":
		return runLogin(ctx, args[1:], stdin, stdout, stderr)
	case "logout":
		return runLogout(ctx, args[1:], stdout, stderr)
	case "user", "workspace", "project", "member", "key", "audit":
		return runTeams(ctx, args[0], args[1:], stdin, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "decoy", Version())
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
