package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command tree, built with spf13/cobra: every command has its help
// with examples, flags spelled --flag, and completions for bash, zsh,
// fish and PowerShell (decoy completion).

// defaultServer is the address the admin API commands call.
const defaultServer = "http://127.0.0.1:8080"

const rootLong = `Decoy serves JSON mock data over HTTP.

Run "decoy serve" for the server, then manage mocks, teams, imports and
exports with the other commands, which call its admin API at --server
(DECOY_SERVER, default http://127.0.0.1:8080) with --admin-token
(DECOY_ADMIN_TOKEN; default: the token stored by "decoy login").

Output: on a terminal, lists print as tables and objects as key/value
views; otherwise, and with -o json, as JSON (what scripts should use).

Exit codes:
  0  done
  1  the command failed: the server refused it or could not be reached,
     a file could not be read
  2  the command line could not be understood: an unknown command or
     flag, a missing argument, a value of the wrong kind`

// run runs the decoy command line args.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := newRootCommand(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = cmd.CommandPath()
	}
	return err
}

// newRootCommand builds the decoy command tree.
func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "decoy",
		Short: "Decoy serves JSON mock data over HTTP",
		Long:  rootLong,
		Example: `  decoy serve --addr 127.0.0.1:8080
  decoy mock create --file users.json --name users
  decoy mock list
  decoy completion bash > /etc/bash_completion.d/decoy`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       Version(),
		RunE:          groupRun,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("decoy {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.AddGroup(&cobra.Group{ID: "server", Title: "Server:"}, &cobra.Group{ID: "mocks", Title: "Mocks:"},
		&cobra.Group{ID: "teams", Title: "Teams:"})
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("server", serveCommand(), adminTokenCommand(), healthcheckCommand(), versionCommand())
	add("mocks", mockCommand(), generateCommand(), importCommand(), exportCommand(), requestsCommand())
	add("teams", loginCommand(), logoutCommand(), passwordCommand())
	add("teams", teamCommands()...)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  decoy help mock create"
		case "completion":
			completionExamples(c)
		}
	}
	return root
}

// groupRun runs a command that only holds others: with no argument it
// prints its help and fails as a usage error; with one, it names the
// command it does not know.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		cmd.SetOut(cmd.ErrOrStderr())
		cmd.Help()
		return &usageError{msg: cmd.CommandPath() + " needs a command", quiet: true}
	}
	what := "command"
	if cmd.HasParent() {
		what = cmd.Name() + " command"
	}
	msg := fmt.Sprintf("unknown %s %q", what, args[0])
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usagef("%s", msg)
}

// group is a command that only holds others.
func group(use, short, example string, cmds ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: use, Short: short, Example: example, Args: cobra.ArbitraryArgs, RunE: groupRun}
	g.AddCommand(cmds...)
	return g
}

// exactArgs wants n positional arguments, and says what they are.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		name := strings.TrimPrefix(cmd.CommandPath(), "decoy ")
		switch {
		case len(args) == n:
			return nil
		case len(args) > n && n == 0:
			return usagef("unexpected argument %q", args[0])
		case len(args) > n:
			return usagef("unexpected argument %q: %s needs %s", args[n], name, what)
		}
		return usagef("%s needs %s", name, what)
	}
}

// apiFlags are the flags of every command that calls the admin API.
type apiFlags struct {
	server string
	token  string
	format string
}

// addAPIFlags adds --server, --admin-token and, when out, -o/--output to
// cmd.
func addAPIFlags(cmd *cobra.Command, out bool) *apiFlags {
	a := &apiFlags{}
	fs := cmd.Flags()
	fs.StringVar(&a.server, "server", defaultServer, "address of the Decoy server (env DECOY_SERVER)")
	fs.StringVar(&a.token, "admin-token", "", `admin token, API key or personal token (env DECOY_ADMIN_TOKEN; default: the token of "decoy login")`)
	if out {
		outputFlag(fs, &a.format)
		cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "table"}, cobra.ShellCompDirectiveNoFileComp))
	}
	return a
}

// resolve fills --server and --admin-token from DECOY_SERVER and
// DECOY_ADMIN_TOKEN when they were not given, then from the token stored
// by decoy login; with needToken, no token at all is an error.
func (a *apiFlags) resolve(fs *pflag.FlagSet, needToken bool) error {
	if v, ok := os.LookupEnv("DECOY_SERVER"); ok && v != "" && !fs.Changed("server") {
		a.server = v
	}
	if v, ok := os.LookupEnv("DECOY_ADMIN_TOKEN"); ok && !fs.Changed("admin-token") {
		a.token = v
	}
	if u, err := url.Parse(a.server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--server must be an http:// or https:// URL, such as %s; not %q", defaultServer, a.server)
	}
	if a.token == "" {
		a.token = savedToken(a.server)
	}
	if needToken && a.token == "" {
		return fmt.Errorf("no admin token: pass --admin-token, set DECOY_ADMIN_TOKEN, or run decoy login")
	}
	return nil
}

func (a *apiFlags) client() *client.Client { return client.New(a.server, a.token) }

// prepare resolves the flags of an admin API command and makes its
// output.
func (a *apiFlags) prepare(cmd *cobra.Command) (*client.Client, *output, error) {
	o, err := newOutput(cmd.OutOrStdout(), a.format)
	if err != nil {
		return nil, nil, err
	}
	o.all = cmd.Flags().Lookup("all") != nil
	if err := a.resolve(cmd.Flags(), true); err != nil {
		return nil, nil, err
	}
	return a.client(), o, nil
}

// completeMockIDs completes a mock id argument with the ids of the mocks
// of the server that --server names (whose name or id matches what was
// typed), their names as descriptions. No answer in 2 s completes
// nothing.
func (a *apiFlags) completeMockIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 || a.resolve(cmd.Flags(), true) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	mocks, _, err := a.client().SearchMocks(ctx, client.MockQuery{Q: toComplete}, "", 100)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var ids []string
	for _, m := range mocks {
		ids = append(ids, m.ID+"\t"+m.Name)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

// completeWorkspaces completes --workspace with the ids of the
// workspaces the caller sees, their names as descriptions.
func (a *apiFlags) completeWorkspaces(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	if a.resolve(cmd.Flags(), true) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var page struct {
		Workspaces []struct{ ID, Name string } `json:"workspaces"`
	}
	if err := a.client().Do(ctx, "GET", "/admin/v1/workspaces", nil, &page); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var ids []string
	for _, w := range page.Workspaces {
		ids = append(ids, w.ID+"\t"+w.Name)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  decoy version",
		Args:    exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "decoy", Version())
			return nil
		},
	}
}

// completionExamples gives cobra's completion command and its shells'
// commands examples, as every command has.
func completionExamples(c *cobra.Command) {
	c.Example = `  decoy completion bash > /etc/bash_completion.d/decoy
  decoy completion zsh > "${fpath[1]}/_decoy"
  decoy completion fish > ~/.config/fish/completions/decoy.fish
  decoy completion powershell | Out-String | Invoke-Expression`
	for _, s := range c.Commands() {
		switch s.Name() {
		case "bash":
			s.Example = "  source <(decoy completion bash)\n  decoy completion bash > /etc/bash_completion.d/decoy"
		case "zsh":
			s.Example = "  source <(decoy completion zsh)\n  decoy completion zsh > \"${fpath[1]}/_decoy\""
		case "fish":
			s.Example = "  decoy completion fish | source\n  decoy completion fish > ~/.config/fish/completions/decoy.fish"
		case "powershell":
			s.Example = "  decoy completion powershell | Out-String | Invoke-Expression"
		}
	}
}
