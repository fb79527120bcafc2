// Command decoy is the Decoy mock-data server and its command-line client.
//
//	decoy serve [flags]          run the server
//	decoy admin-token reset      replace a lost generated admin token
//	decoy mock COMMAND [flags]   manage mocks through the admin API
//	decoy generate FILE          print the data a template generates
//	decoy login, logout          sign in with email and password
//	decoy user|workspace|project|member|key|audit ...  manage teams (§6)
//	decoy import FILE [flags]    make mocks of an OpenAPI, json-server or Decoy export file
//	decoy export --out F [flags] write a project's mocks to a .tar.gz or a folder
//	decoy requests --project P   print a project's request journal, or follow it
//	decoy healthcheck            check that the server answers (the image's HEALTHCHECK)
//	decoy completion SHELL       print a shell completion script
//	decoy version                print the version
//
// The command tree is built with spf13/cobra in cli.go; what a command
// prints is chosen in output.go, and errors become one line in errors.go.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(report(os.Stderr, err))
}
