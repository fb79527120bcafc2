package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// decoy user, workspace, project, member, key and audit call the teams
// part of the admin API (§6.3) and print its answers as JSON.

const teamsUsage = `Usage:
  decoy user create --email E --name N [--password-stdin] [--server-admin]
  decoy user list [--limit N] [--cursor C]
  decoy user get|delete USER_ID
  decoy user patch USER_ID [--name N] [--password-stdin] [--server-admin true|false]

  decoy workspace create NAME
  decoy workspace list
  decoy workspace get|delete WS
  decoy workspace rename WS NAME
  decoy workspace limits WS [--max-mocks N] [--max-bytes N] [--monthly-reads N]
                                   (server admins; a limit left out is none)

  decoy project create --workspace WS NAME
  decoy project list --workspace WS
  decoy project get PROJECT
  decoy project rename PROJECT NAME
  decoy project delete PROJECT [--cascade]

  decoy member list --workspace WS
  decoy member add --workspace WS --email E --role owner|editor|viewer
                                   (an email with no user prints an invitation link)
  decoy member role --workspace WS USER_ID owner|editor|viewer
  decoy member remove --workspace WS USER_ID

  decoy key create --workspace WS --name N --role editor|viewer [--project P]
                   [--expires 720h|2027-01-01T00:00:00Z]
                                   (the key's secret is printed this once)
  decoy key list --workspace WS
  decoy key revoke --workspace WS KEY_ID

  decoy audit --workspace WS [--limit N] [--cursor C]

Every command takes --server (env DECOY_SERVER, default http://127.0.0.1:8080)
and --admin-token (env DECOY_ADMIN_TOKEN; default: the token of decoy login).
`

// call is one admin API call a command makes.
type call struct {
	method, path string
	body         any
}

// teamCommand parses the flags of one command and says what to call; it
// gets the positional arguments, and reads secrets from in.
type teamCommand struct {
	args  int    // positional arguments wanted
	names string // what they are, for the error
	flags func(fs *flag.FlagSet) func(pos []string, in *bufio.Reader) (call, error)
}

func runTeams(ctx context.Context, group string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmds := teamCommands[group]
	if group == "audit" {
		args = append([]string{""}, args...)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, teamsUsage)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	tc, ok := cmds[args[0]]
	if !ok {
		fmt.Fprint(stderr, teamsUsage)
		return fmt.Errorf("%w: unknown %s command %q", errUsage, group, args[0])
	}
	c := newMockCommand(strings.TrimSpace(group+" "+args[0]), stderr, stdout)
	c.fs.Usage = func() { fmt.Fprint(stderr, teamsUsage) }
	build := tc.flags(c.fs)
	pos, err := parseArgs(c.fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != tc.args {
		c.fs.Usage()
		return fmt.Errorf("%w: decoy %s needs %s", errUsage, c.fs.Name(), tc.names)
	}
	if c.token == "" {
		c.token = savedToken(c.server)
	}
	if c.token == "" {
		return fmt.Errorf("no admin token: pass --admin-token, set DECOY_ADMIN_TOKEN, or run decoy login")
	}
	cl, err := build(pos, bufio.NewReader(stdin))
	if err != nil {
		return err
	}
	var out any
	if err := c.client().Do(ctx, cl.method, "/admin/v1/"+cl.path, cl.body, &out); err != nil {
		return err
	}
	if out == nil {
		return nil // 204
	}
	return c.print(out)
}

// workspaceFlag adds --workspace, which is required.
func workspaceFlag(fs *flag.FlagSet) *string {
	return fs.String("workspace", "", "id of the workspace")
}

func needWorkspace(ws string) error {
	if ws == "" {
		return fmt.Errorf("%w: --workspace is required", errUsage)
	}
	return nil
}

// pageFlags adds --limit and --cursor, and gives the query they make.
func pageFlags(fs *flag.FlagSet) func() string {
	limit := fs.Int("limit", 0, "entries per page (1-1000; default 100)")
	cursor := fs.String("cursor", "", "cursor of the page to show (from next_cursor)")
	return func() string {
		q := url.Values{}
		if *limit > 0 {
			q.Set("limit", strconv.Itoa(*limit))
		}
		if *cursor != "" {
			q.Set("cursor", *cursor)
		}
		if len(q) == 0 {
			return ""
		}
		return "?" + q.Encode()
	}
}

// simple is a command with only positional arguments.
func simple(args int, names string, build func(pos []string) call) teamCommand {
	return teamCommand{args: args, names: names, flags: func(*flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
		return func(pos []string, _ *bufio.Reader) (call, error) { return build(pos), nil }
	}}
}

// inWorkspace is a command of a workspace's resource: --workspace and
// positional arguments.
func inWorkspace(args int, names string, build func(ws string, pos []string) (call, error)) teamCommand {
	return teamCommand{args: args, names: names, flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
		ws := workspaceFlag(fs)
		return func(pos []string, _ *bufio.Reader) (call, error) {
			if err := needWorkspace(*ws); err != nil {
				return call{}, err
			}
			return build(url.PathEscape(*ws), pos)
		}
	}}
}

// optionalInt is an integer flag that may be left out.
type optionalInt struct{ v *int64 }

func (o *optionalInt) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatInt(*o.v, 10)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want a number of 0 or more")
	}
	o.v = &n
	return nil
}

// password reads a password: the line of standard input.
func password(in *bufio.Reader) (string, error) {
	return readLine(in)
}

var teamCommands = map[string]map[string]teamCommand{
	"user": {
		"create": {flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			email := fs.String("email", "", "the user's email")
			name := fs.String("name", "", "the user's name")
			admin := fs.Bool("server-admin", false, "make the user a server admin")
			fs.Bool("password-stdin", true, "read the password from standard input (always)")
			return func(_ []string, in *bufio.Reader) (call, error) {
				pw, err := password(in)
				if err != nil {
					return call{}, err
				}
				return call{"POST", "users", map[string]any{"email": *email, "name": *name, "password": pw, "server_admin": *admin}}, nil
			}
		}},
		"list": {flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			page := pageFlags(fs)
			return func([]string, *bufio.Reader) (call, error) { return call{"GET", "users" + page(), nil}, nil }
		}},
		"get":    simple(1, "a user id", func(p []string) call { return call{"GET", "users/" + url.PathEscape(p[0]), nil} }),
		"delete": simple(1, "a user id", func(p []string) call { return call{"DELETE", "users/" + url.PathEscape(p[0]), nil} }),
		"patch": {args: 1, names: "a user id", flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			name := fs.String("name", "", "new name")
			pwStdin := fs.Bool("password-stdin", false, "read a new password from standard input")
			admin := fs.String("server-admin", "", "true or false")
			return func(pos []string, in *bufio.Reader) (call, error) {
				body := map[string]any{}
				if *name != "" {
					body["name"] = *name
				}
				if *admin != "" {
					b, err := strconv.ParseBool(*admin)
					if err != nil {
						return call{}, fmt.Errorf("%w: --server-admin wants true or false", errUsage)
					}
					body["server_admin"] = b
				}
				if *pwStdin {
					pw, err := password(in)
					if err != nil {
						return call{}, err
					}
					body["password"] = pw
				}
				return call{"PATCH", "users/" + url.PathEscape(pos[0]), body}, nil
			}
		}},
	},
	"workspace": {
		"create": simple(1, "a name", func(p []string) call { return call{"POST", "workspaces", map[string]string{"name": p[0]}} }),
		"list":   simple(0, "no argument", func([]string) call { return call{"GET", "workspaces", nil} }),
		"get":    simple(1, "a workspace id", func(p []string) call { return call{"GET", "workspaces/" + url.PathEscape(p[0]), nil} }),
		"delete": simple(1, "a workspace id", func(p []string) call { return call{"DELETE", "workspaces/" + url.PathEscape(p[0]), nil} }),
		"rename": simple(2, "a workspace id and a name", func(p []string) call {
			return call{"PATCH", "workspaces/" + url.PathEscape(p[0]), map[string]string{"name": p[1]}}
		}),
		"limits": {args: 1, names: "a workspace id", flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			var mocks, bytes, reads optionalInt
			fs.Var(&mocks, "max-mocks", "most mocks (left out: no limit)")
			fs.Var(&bytes, "max-bytes", "most bytes of data, kept versions included (left out: no limit)")
			fs.Var(&reads, "monthly-reads", "most served reads of its mocks per month (left out: no limit)")
			return func(pos []string, _ *bufio.Reader) (call, error) {
				return call{"PATCH", "workspaces/" + url.PathEscape(pos[0]), map[string]any{"limits": map[string]*int64{
					"max_mocks": mocks.v, "max_bytes": bytes.v, "monthly_reads": reads.v}}}, nil
			}
		}},
	},
	"project": {
		"create": inWorkspace(1, "a name", func(ws string, p []string) (call, error) {
			return call{"POST", "workspaces/" + ws + "/projects", map[string]string{"name": p[0]}}, nil
		}),
		"list": inWorkspace(0, "no argument", func(ws string, _ []string) (call, error) {
			return call{"GET", "workspaces/" + ws + "/projects", nil}, nil
		}),
		"get": simple(1, "a project id", func(p []string) call { return call{"GET", "projects/" + url.PathEscape(p[0]), nil} }),
		"rename": simple(2, "a project id and a name", func(p []string) call {
			return call{"PATCH", "projects/" + url.PathEscape(p[0]), map[string]string{"name": p[1]}}
		}),
		"delete": {args: 1, names: "a project id", flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			cascade := fs.Bool("cascade", false, "delete the project's mocks too")
			return func(pos []string, _ *bufio.Reader) (call, error) {
				return call{"DELETE", "projects/" + url.PathEscape(pos[0]) + "?cascade=" + strconv.FormatBool(*cascade), nil}, nil
			}
		}},
	},
	"member": {
		"list": inWorkspace(0, "no argument", func(ws string, _ []string) (call, error) {
			return call{"GET", "workspaces/" + ws + "/members", nil}, nil
		}),
		"add": {flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			ws := workspaceFlag(fs)
			email := fs.String("email", "", "the person's email")
			role := fs.String("role", "viewer", "owner, editor or viewer")
			return func([]string, *bufio.Reader) (call, error) {
				if err := needWorkspace(*ws); err != nil {
					return call{}, err
				}
				return call{"POST", "workspaces/" + url.PathEscape(*ws) + "/members", map[string]string{"email": *email, "role": *role}}, nil
			}
		}},
		"role": inWorkspace(2, "a user id and a role", func(ws string, p []string) (call, error) {
			return call{"PATCH", "workspaces/" + ws + "/members/" + url.PathEscape(p[0]), map[string]string{"role": p[1]}}, nil
		}),
		"remove": inWorkspace(1, "a user id", func(ws string, p []string) (call, error) {
			return call{"DELETE", "workspaces/" + ws + "/members/" + url.PathEscape(p[0]), nil}, nil
		}),
	},
	"key": {
		"create": {flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			ws := workspaceFlag(fs)
			name := fs.String("name", "", "what the key is for")
			role := fs.String("role", "viewer", "editor or viewer")
			project := fs.String("project", "", "limit the key to this project")
			expires := fs.String("expires", "", "when the key stops working: a duration from now (720h) or a time (RFC 3339)")
			return func([]string, *bufio.Reader) (call, error) {
				if err := needWorkspace(*ws); err != nil {
					return call{}, err
				}
				body := map[string]any{"name": *name, "role": *role}
				if *project != "" {
					body["project_id"] = *project
				}
				if *expires != "" {
					at, err := time.Parse(time.RFC3339, *expires)
					if err != nil {
						d, derr := time.ParseDuration(*expires)
						if derr != nil || d <= 0 {
							return call{}, fmt.Errorf("%w: --expires wants a duration (720h) or an RFC 3339 time", errUsage)
						}
						at = time.Now().Add(d).UTC().Truncate(time.Second)
					}
					body["expires_at"] = at
				}
				return call{"POST", "workspaces/" + url.PathEscape(*ws) + "/keys", body}, nil
			}
		}},
		"list": inWorkspace(0, "no argument", func(ws string, _ []string) (call, error) {
			return call{"GET", "workspaces/" + ws + "/keys", nil}, nil
		}),
		"revoke": inWorkspace(1, "a key id", func(ws string, p []string) (call, error) {
			return call{"DELETE", "workspaces/" + ws + "/keys/" + url.PathEscape(p[0]), nil}, nil
		}),
	},
	"audit": {
		"": {flags: func(fs *flag.FlagSet) func([]string, *bufio.Reader) (call, error) {
			ws := workspaceFlag(fs)
			page := pageFlags(fs)
			return func([]string, *bufio.Reader) (call, error) {
				if err := needWorkspace(*ws); err != nil {
					return call{}, err
				}
				return call{"GET", "workspaces/" + url.PathEscape(*ws) + "/audit" + page(), nil}, nil
			}
		}},
	},
}
