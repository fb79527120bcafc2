package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// decoy user, workspace, project, member, key, token and audit call the teams
// part of the admin API (§6.3) and print its answers: tables and
// key/value views on a terminal, JSON otherwise.

// call is one admin API call a command makes.
type call struct {
	method, path string
	body         any
}

// teamCommand is one command of a team group: its help, the flags it
// parses, and what it calls; build gets the positional arguments, and
// reads secrets from in.
type teamCommand struct {
	use, short, long, example string
	args                      int    // positional arguments wanted
	names                     string // what they are, for the error
	flags                     func(fs *pflag.FlagSet) func(pos []string, in *bufio.Reader) (call, error)
	// list is the key of the array a list answers with, shown as a table
	// of cols; empty is said when it is empty.
	list  string
	cols  []column
	empty string
	// done is said when the answer is empty (204), with the first
	// argument for its %s: on standard output on a terminal, else on
	// standard error, so that a script's log shows it and its output
	// stays empty.
	done string
	// twins is the key of the list that the path a create command posts
	// to answers a GET with: the things of the same kind, among which a
	// name must be unique to be a handle. A new one whose name another
	// already has is made, with a warning.
	twins string
	// more is a second list shown after the first one.
	more *moreList
}

// moreList is a second list a list command shows: its path, made from the
// first one's; the key of its array, which the JSON output holds beside
// the first's; its columns, and the title it is shown under on a
// terminal when it is not empty.
type moreList struct {
	path  func(first string) string
	key   string
	cols  []column
	title string
}

// teamCommands builds decoy user, workspace, project, member, key, route,
// token and audit.
func teamCommands() []*cobra.Command {
	groups := []struct{ use, short, example string }{
		{"user", "Manage the server's users (server admins)", "  decoy user list\n  decoy user create --email ann@example.com --name Ann --password-stdin < password.txt"},
		{"workspace", "Manage workspaces", "  decoy workspace create team\n  decoy workspace list"},
		{"project", "Manage a workspace's projects", "  decoy project create --workspace WS api\n  decoy project list --workspace WS"},
		{"member", "Manage who is in a workspace, and their roles", "  decoy member add --workspace WS --email bob@example.com --role editor\n  decoy member list --workspace WS"},
		{"invitation", "List and revoke a workspace's pending invitations", "  decoy invitation list --workspace WS\n  decoy invitation revoke --workspace WS bob@example.com"},
		{"key", "Manage a workspace's API keys, for scripts and CI", "  decoy key create --workspace WS --name ci --role editor --expires 720h\n  decoy key list --workspace WS"},
		{"route", "Manage a project's routes: its answers at its API's own paths", "  decoy route create --project PROJECT --method GET --path /users --mock MOCK\n  decoy route list --project PROJECT"},
		{"token", "List and revoke your personal access tokens", "  decoy token list\n  decoy token revoke TOKEN_ID"},
	}
	var cmds []*cobra.Command
	for _, g := range groups {
		var subs []*cobra.Command
		for _, tc := range teamSpecs()[g.use] {
			subs = append(subs, tc.command())
		}
		cmds = append(cmds, group(g.use, g.short, g.example, subs...))
	}
	return append(cmds, teamSpecs()["audit"][0].command())
}

// command makes the cobra command of tc.
func (tc teamCommand) command() *cobra.Command {
	cmd := &cobra.Command{Use: tc.use, Short: tc.short, Long: tc.long, Example: tc.example, Args: exactArgs(tc.args, tc.names)}
	a := addAPIFlags(cmd, true)
	send := tc.flags(cmd.Flags())
	if cmd.Flags().Lookup("workspace") != nil {
		cmd.RegisterFlagCompletionFunc("workspace", a.completeWorkspaces)
	}
	cmd.RunE = func(cmd *cobra.Command, pos []string) error {
		o, err := newOutput(cmd.OutOrStdout(), a.format)
		if err != nil {
			return err
		}
		c, err := send(pos, bufio.NewReader(cmd.InOrStdin()))
		if err != nil {
			return err
		}
		if err := a.resolve(cmd.Flags(), true); err != nil {
			return err
		}
		if c, err = (handles{a.client()}).resolve(cmd.Context(), c); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := a.client().Do(cmd.Context(), c.method, "/admin/v1/"+c.path, c.body, &raw); err != nil {
			return err
		}
		if len(raw) == 0 { // 204
			if tc.done != "" {
				o.done(cmd.ErrOrStderr(), tc.done, pos[0])
			}
			return nil
		}
		if tc.twins != "" {
			warnTwins(cmd.Context(), a.client(), cmd.ErrOrStderr(), c.path, tc.twins, raw)
		}
		if tc.more != nil {
			if raw, err = tc.more.add(cmd.Context(), a.client(), c.path, raw); err != nil {
				return err
			}
		}
		if o.human() {
			if tc.list == "" {
				return o.object(raw)
			}
			if err := o.list(raw, tc.list, tc.cols, tc.empty); err != nil || tc.more == nil {
				return err
			}
			return tc.more.show(o, raw)
		}
		// As the CLI always printed it: decoded, and encoded again.
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		return o.json(v)
	}
	return cmd
}

// warnTwins warns on w when the thing just made (its answer, raw) has the
// name of another in the list at path (under key), the one it was posted
// to: the name, as a handle, now stands for both, and a command given it
// refuses it as ambiguous. A list that cannot be read warns of nothing:
// the thing is made.
func warnTwins(ctx context.Context, cl *client.Client, w io.Writer, path, key string, raw json.RawMessage) {
	var made struct{ ID, Name string }
	if json.Unmarshal(raw, &made) != nil || made.Name == "" {
		return
	}
	var page map[string][]struct{ ID, Name string }
	if cl.Do(ctx, "GET", "/admin/v1/"+path, nil, &page) != nil {
		return
	}
	var others []string
	for _, t := range page[key] {
		if t.Name == made.Name && t.ID != made.ID {
			others = append(others, t.ID)
		}
	}
	if len(others) == 0 {
		return
	}
	kind, some := strings.TrimSuffix(key, "s"), "another "+strings.TrimSuffix(key, "s")+" is"
	if len(others) > 1 {
		some = strconv.Itoa(len(others)) + " other " + key + " are"
	}
	fmt.Fprintf(w, "decoy: warning: %s named %q already (%s): the name now stands for more than one, and --%s %q is refused as ambiguous. "+
		"Give the new one's id (%s), or rename one with \"decoy %s rename ID NAME\".\n", some, made.Name, strings.Join(others, ", "), kind, made.Name, made.ID, kind)
}

// add calls the second list, and puts its array into the first answer.
func (m *moreList) add(ctx context.Context, cl *client.Client, first string, raw json.RawMessage) (json.RawMessage, error) {
	var more, doc map[string]json.RawMessage
	if err := cl.Do(ctx, "GET", "/admin/v1/"+m.path(first), nil, &more); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	doc[m.key] = more[m.key]
	return json.Marshal(doc)
}

// show prints the second list under its title, when it is not empty.
func (m *moreList) show(o *output, raw json.RawMessage) error {
	var doc map[string]json.RawMessage
	var rows []json.RawMessage
	if json.Unmarshal(raw, &doc) != nil || json.Unmarshal(doc[m.key], &rows) != nil || len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(o.w, "\n%s\n", m.title)
	return o.list(raw, m.key, m.cols, "")
}

// workspaceFlag adds --workspace, which is required.
func workspaceFlag(fs *pflag.FlagSet) *string {
	return fs.String("workspace", "", "the workspace: its id or its name (required)")
}

func needWorkspace(ws string) error {
	if ws == "" {
		return usagef("--workspace is required")
	}
	return nil
}

// pageFlags adds --limit and --cursor, and gives the query they make.
func pageFlags(fs *pflag.FlagSet) func() string {
	limit := fs.Int("limit", 0, "entries per page, 1-1000 (default: the server's, 100)")
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
func simple(tc teamCommand, build func(pos []string) call) teamCommand {
	tc.flags = func(*pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
		return func(pos []string, _ *bufio.Reader) (call, error) { return build(pos), nil }
	}
	return tc
}

// inWorkspace is a command of a workspace's resource: --workspace and
// positional arguments.
func inWorkspace(tc teamCommand, build func(ws string, pos []string) (call, error)) teamCommand {
	tc.flags = func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
		ws := workspaceFlag(fs)
		return func(pos []string, _ *bufio.Reader) (call, error) {
			if err := needWorkspace(*ws); err != nil {
				return call{}, err
			}
			return build(wsRef(*ws), pos)
		}
	}
	return tc
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

func (o *optionalInt) Type() string { return "N" }

// teamSpecs are the commands of each team group, in the order help lists
// them.
func teamSpecs() map[string][]teamCommand {
	return map[string][]teamCommand{
		"user": {
			{use: "create", short: "Create a user (server admins)", args: 0, names: "no argument",
				long:    "Create a user. The password (12 characters or more) is the first line of standard input.",
				example: "  decoy user create --email ann@example.com --name Ann < password.txt",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
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
			{use: "list", short: "List users (server admins)", args: 0, names: "no argument", example: "  decoy user list",
				list: "users", cols: userColumns, empty: "No users.",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					page := pageFlags(fs)
					return func([]string, *bufio.Reader) (call, error) { return call{"GET", "users" + page(), nil}, nil }
				}},
			simple(teamCommand{use: "get USER_ID", short: "Show a user", args: 1, names: "a user id", example: "  decoy user get USER_ID"},
				func(p []string) call { return call{"GET", "users/" + url.PathEscape(p[0]), nil} }),
			{use: "patch USER_ID", short: "Change a user's name, password or server admin role", args: 1, names: "a user id",
				example: "  decoy user patch USER_ID --name 'Ann Lee'\n  decoy user patch USER_ID --password-stdin < new-password.txt",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
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
								return call{}, usagef("--server-admin wants true or false")
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
			simple(teamCommand{use: "delete USER_ID", short: "Delete a user", args: 1, names: "a user id", example: "  decoy user delete USER_ID", done: "Deleted user %s"},
				func(p []string) call { return call{"DELETE", "users/" + url.PathEscape(p[0]), nil} }),
		},
		"workspace": {
			simple(teamCommand{use: "create NAME", short: "Create a workspace, with a project named default", args: 1, names: "a name", example: "  decoy workspace create team", twins: "workspaces",
				long: "Create a workspace, with a project named default. Commands take a workspace by its id or its name; a name that another workspace has already is made, with a warning, and is then ambiguous: give the id."},
				func(p []string) call { return call{"POST", "workspaces", map[string]string{"name": p[0]}} }),
			simple(teamCommand{use: "list", short: "List the workspaces you see", args: 0, names: "no argument", example: "  decoy workspace list",
				list: "workspaces", cols: workspaceColumns, empty: `No workspaces. Create one with "decoy workspace create NAME".`},
				func([]string) call { return call{"GET", "workspaces", nil} }),
			simple(teamCommand{use: "get WS", short: "Show a workspace and its limits", args: 1, names: "a workspace (id or name)", example: "  decoy workspace get WS"},
				func(p []string) call { return call{"GET", "workspaces/" + wsRef(p[0]), nil} }),
			simple(teamCommand{use: "rename WS NAME", short: "Rename a workspace", args: 2, names: "a workspace (id or name) and a name", example: "  decoy workspace rename WS platform"},
				func(p []string) call {
					return call{"PATCH", "workspaces/" + wsRef(p[0]), map[string]string{"name": p[1]}}
				}),
			{use: "limits WS", short: "Set a workspace's limits (server admins)", args: 1, names: "a workspace (id or name)",
				long:    "Set a workspace's limits; a limit left out is none.",
				example: "  decoy workspace limits WS --max-mocks 100 --max-bytes 1073741824 --monthly-reads 1000000",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					var mocks, bytes, reads optionalInt
					fs.Var(&mocks, "max-mocks", "most mocks (left out: no limit)")
					fs.Var(&bytes, "max-bytes", "most bytes of data, kept versions included (left out: no limit)")
					fs.Var(&reads, "monthly-reads", "most served reads of its mocks per month (left out: no limit)")
					return func(pos []string, _ *bufio.Reader) (call, error) {
						return call{"PATCH", "workspaces/" + wsRef(pos[0]), map[string]any{"limits": map[string]*int64{
							"max_mocks": mocks.v, "max_bytes": bytes.v, "monthly_reads": reads.v}}}, nil
					}
				}},
			simple(teamCommand{use: "delete WS", short: "Delete a workspace", args: 1, names: "a workspace (id or name)", example: "  decoy workspace delete WS", done: "Deleted workspace %s"},
				func(p []string) call { return call{"DELETE", "workspaces/" + wsRef(p[0]), nil} }),
		},
		"project": {
			inWorkspace(teamCommand{use: "create NAME", short: "Create a project in a workspace", args: 1, names: "a name", example: "  decoy project create --workspace WS api"},
				func(ws string, p []string) (call, error) {
					return call{"POST", "workspaces/" + ws + "/projects", map[string]string{"name": p[0]}}, nil
				}),
			inWorkspace(teamCommand{use: "list", short: "List a workspace's projects", args: 0, names: "no argument", example: "  decoy project list --workspace WS",
				list: "projects", cols: projectColumns, empty: "No projects."},
				func(ws string, _ []string) (call, error) {
					return call{"GET", "workspaces/" + ws + "/projects", nil}, nil
				}),
			simple(teamCommand{use: "get PROJECT", short: "Show a project", args: 1, names: "a project (id or name)", example: "  decoy project get PROJECT"},
				func(p []string) call { return call{"GET", "projects/" + projectRef(p[0], ""), nil} }),
			simple(teamCommand{use: "rename PROJECT NAME", short: "Rename a project", args: 2, names: "a project (id or name) and a name", example: "  decoy project rename PROJECT web"},
				func(p []string) call {
					return call{"PATCH", "projects/" + projectRef(p[0], ""), map[string]string{"name": p[1]}}
				}),
			simple(teamCommand{use: "slug PROJECT SLUG", short: "Change the slug a project's routes answer under (/p/SLUG)", args: 2, names: "a project (id or name) and a slug",
				long:    "Change a project's slug: 1-63 characters of a-z, 0-9 and -, not starting or ending with -, unique on the server. The routes answer under the new one at once, and no longer under the old one.",
				example: "  decoy project slug PROJECT shop\n  decoy project slug default shop"},
				func(p []string) call {
					return call{"PATCH", "projects/" + projectRef(p[0], ""), map[string]string{"slug": p[1]}}
				}),
			{use: "update PROJECT", short: "Change a project's name, slug, upstream or mode", args: 1, names: "a project (id or name)",
				long: "Change any of a project's name, slug, upstream and mode. The upstream is the base URL (http or https) of the real backend the project stands in for; --upstream '' removes it. The mode is mock (unmatched requests get 404), passthrough (requests that match no route are forwarded to the upstream) or record (every request is forwarded, and each GET answer with a JSON body is kept as a mock with a route at its path).",
				example: "  decoy project update PROJECT --upstream https://api.example.com --mode passthrough\n" +
					"  decoy project update default --mode record\n  decoy project update PROJECT --mode mock",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					name := fs.String("name", "", "new name")
					slug := fs.String("slug", "", "new slug")
					up := fs.String("upstream", "", "base URL of the real backend ('' for none)")
					mode := fs.String("mode", "", "mock, passthrough or record")
					return func(pos []string, _ *bufio.Reader) (call, error) {
						body := map[string]string{}
						for flag, v := range map[string]*string{"name": name, "slug": slug, "upstream": up, "mode": mode} {
							if fs.Changed(flag) {
								body[flag] = *v
							}
						}
						if len(body) == 0 {
							return call{}, usagef("give at least one of --name, --slug, --upstream and --mode")
						}
						return call{"PATCH", "projects/" + projectRef(pos[0], ""), body}, nil
					}
				}},
			{use: "delete PROJECT", short: "Delete a project (with its mocks: --cascade)", args: 1, names: "a project (id or name)", done: "Deleted project %s",
				example: "  decoy project delete PROJECT\n  decoy project delete PROJECT --cascade",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					cascade := fs.Bool("cascade", false, "delete the project's mocks too")
					return func(pos []string, _ *bufio.Reader) (call, error) {
						return call{"DELETE", "projects/" + projectRef(pos[0], "") + "?cascade=" + strconv.FormatBool(*cascade), nil}, nil
					}
				}},
		},
		"route": routeCommands(),
		"token": tokenCommands(),
		"member": {
			inWorkspace(teamCommand{use: "list", short: "List a workspace's members, and its pending invitations", args: 0, names: "no argument", example: "  decoy member list --workspace WS",
				list: "members", cols: memberColumns, empty: "No members.",
				more: &moreList{path: func(first string) string { return strings.TrimSuffix(first, "/members") + "/invitations" },
					key: "invitations", cols: invitationColumns, title: `Pending invitations (revoke one with "decoy invitation revoke --workspace WS EMAIL"):`}},
				func(ws string, _ []string) (call, error) {
					return call{"GET", "workspaces/" + ws + "/members", nil}, nil
				}),
			{use: "add", short: "Add a person to a workspace (an email with no user prints an invitation link)", args: 0, names: "no argument",
				example: "  decoy member add --workspace WS --email bob@example.com --role editor",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					ws := workspaceFlag(fs)
					email := fs.String("email", "", "the person's email")
					role := fs.String("role", "viewer", "owner, editor or viewer")
					return func([]string, *bufio.Reader) (call, error) {
						if err := needWorkspace(*ws); err != nil {
							return call{}, err
						}
						return call{"POST", "workspaces/" + wsRef(*ws) + "/members", map[string]string{"email": *email, "role": *role}}, nil
					}
				}},
			inWorkspace(teamCommand{use: "role USER_ID owner|editor|viewer", short: "Change a member's role", args: 2, names: "a user id and a role",
				example: "  decoy member role --workspace WS USER_ID editor"},
				func(ws string, p []string) (call, error) {
					return call{"PATCH", "workspaces/" + ws + "/members/" + url.PathEscape(p[0]), map[string]string{"role": p[1]}}, nil
				}),
			inWorkspace(teamCommand{use: "remove USER_ID", short: "Remove a member from a workspace", args: 1, names: "a user id", done: "Removed member %s",
				example: "  decoy member remove --workspace WS USER_ID"},
				func(ws string, p []string) (call, error) {
					return call{"DELETE", "workspaces/" + ws + "/members/" + url.PathEscape(p[0]), nil}, nil
				}),
		},
		"invitation": {
			inWorkspace(teamCommand{use: "list", short: "List a workspace's pending invitations", args: 0, names: "no argument", example: "  decoy invitation list --workspace WS",
				list: "invitations", cols: invitationColumns, empty: `No pending invitations. Invite someone with "decoy member add --workspace WS --email EMAIL".`},
				func(ws string, _ []string) (call, error) {
					return call{"GET", "workspaces/" + ws + "/invitations", nil}, nil
				}),
			inWorkspace(teamCommand{use: "revoke EMAIL", short: "Revoke a pending invitation; its link stops working at once", args: 1, names: "the invited email", done: "Revoked the invitation of %s; its link no longer works",
				example: "  decoy invitation revoke --workspace WS bob@example.com"},
				func(ws string, p []string) (call, error) {
					return call{"DELETE", "workspaces/" + ws + "/invitations/" + url.PathEscape(p[0]), nil}, nil
				}),
		},
		"key": {
			{use: "create", short: "Create an API key; its secret is printed this once", args: 0, names: "no argument",
				example: "  decoy key create --workspace WS --name ci --role editor --expires 720h\n  decoy key create --workspace WS --name reader --project PROJECT",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					ws := workspaceFlag(fs)
					name := fs.String("name", "", "what the key is for")
					role := fs.String("role", "viewer", "editor or viewer")
					project := fs.String("project", "", "limit the key to this project (id or name)")
					expires := fs.String("expires", "", "when the key stops working: a duration from now (720h) or a time (RFC 3339)")
					return func([]string, *bufio.Reader) (call, error) {
						if err := needWorkspace(*ws); err != nil {
							return call{}, err
						}
						body := map[string]any{"name": *name, "role": *role}
						if *project != "" {
							body["project_id"] = projectRef(*project, *ws)
						}
						if *expires != "" {
							at, err := time.Parse(time.RFC3339, *expires)
							if err != nil {
								d, derr := time.ParseDuration(*expires)
								if derr != nil || d <= 0 {
									return call{}, usagef("--expires wants a duration (720h) or an RFC 3339 time")
								}
								at = time.Now().Add(d).UTC().Truncate(time.Second)
							}
							body["expires_at"] = at
						}
						return call{"POST", "workspaces/" + wsRef(*ws) + "/keys", body}, nil
					}
				}},
			inWorkspace(teamCommand{use: "list", short: "List a workspace's API keys", args: 0, names: "no argument", example: "  decoy key list --workspace WS",
				list: "keys", cols: keyColumns, empty: `No API keys. Create one with "decoy key create".`},
				func(ws string, _ []string) (call, error) { return call{"GET", "workspaces/" + ws + "/keys", nil}, nil }),
			inWorkspace(teamCommand{use: "revoke KEY_ID", short: "Revoke an API key; it stops working at once", args: 1, names: "a key id", done: "Revoked key %s",
				example: "  decoy key revoke --workspace WS KEY_ID"},
				func(ws string, p []string) (call, error) {
					return call{"DELETE", "workspaces/" + ws + "/keys/" + url.PathEscape(p[0]), nil}, nil
				}),
		},
		"audit": {
			{use: "audit", short: "Show a workspace's audit log, newest first", args: 0, names: "no argument",
				example: "  decoy audit --workspace WS\n  decoy audit --workspace WS --limit 20 -o json",
				list:    "entries", cols: auditColumns, empty: "No entries.",
				flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
					ws := workspaceFlag(fs)
					page := pageFlags(fs)
					return func([]string, *bufio.Reader) (call, error) {
						if err := needWorkspace(*ws); err != nil {
							return call{}, err
						}
						return call{"GET", "workspaces/" + wsRef(*ws) + "/audit" + page(), nil}, nil
					}
				}},
		},
	}
}
