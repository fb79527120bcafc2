package main

import (
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
)

// decoy mock: the mocks of the admin API (§3, §4), and their versions
// (versions.go) and templates (generate.go).

func mockCommand() *cobra.Command {
	return group("mock", "Create, list, change and delete mocks",
		`  decoy mock create --file users.json --name users
  decoy mock list
  decoy mock get 0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d`,
		mockCreateCommand(), mockListCommand(), mockGetCommand(), mockDataCommand(), mockUpdateCommand(),
		mockPatchCommand(), mockRotateTokenCommand(), mockUsageCommand(), mockDeleteCommand(),
		mockVersionsCommand(), mockVersionDataCommand(), mockRestoreCommand(), mockResetCommand(), mockSnapshotCommand())
}

// limitFlag is a limit override: a number, or "default" for the server's.
type limitFlag struct {
	set   bool
	value *int64
}

func (l *limitFlag) String() string {
	if l.value == nil {
		return ""
	}
	return strconv.FormatInt(*l.value, 10)
}

func (l *limitFlag) Set(s string) error {
	l.set = true
	if s == "default" {
		l.value = nil
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want a number of 0 or more (0: unlimited), or default")
	}
	l.value = &n
	return nil
}

func (l *limitFlag) Type() string { return "N|default" }

func mockCreateCommand() *cobra.Command {
	var file, template, mode, seed string
	var schema bool
	var rate, quota limitFlag
	o := client.CreateOptions{}
	cmd := &cobra.Command{
		Use:   "create --file FILE | --template FILE",
		Short: "Store a file as a new mock, or make one from a template",
		Long: `Store FILE (- for standard input) as a new mock and print it. Its content
type comes from --content-type, else from the file's extension, else JSON.

With --template, the mock's data is generated from the template FILE: once
now (--mode once), or afresh on every read (--mode always). FILE is a JSON
Schema with --schema or a name ending in .schema.json.

A private mock's token is printed this once.`,
		Example: `  decoy mock create --file users.json --name users
  curl -s https://example.com/data.json | decoy mock create --file - --private
  decoy mock create --template people.json --mode always --name people
  decoy mock create --template people.json --seed 42 --name people
  decoy mock create --file page.html --status 201 --delay-ms 300 --project PROJECT_ID`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, true)
	fs := cmd.Flags()
	fs.StringVar(&file, "file", "", "file with the data (- for standard input)")
	fs.StringVar(&o.Name, "name", "", "name of the mock")
	fs.BoolVar(&o.Private, "private", false, "require a token to read it (printed once)")
	fs.StringVar(&o.ContentType, "content-type", "", "content type (default: from the file extension, else application/json)")
	fs.StringVar(&o.ID, "id", "", "UUID to create the mock under (default: random)")
	fs.IntVar(&o.Status, "status", 200, "HTTP status of successful reads")
	fs.IntVar(&o.DelayMS, "delay-ms", 0, "response delay in milliseconds (0-30000)")
	fs.Var(&rate, "rate-limit", "requests per minute (0: unlimited; default: the server's)")
	fs.Var(&quota, "monthly-quota", "served responses per month (0: unlimited; default: the server's)")
	fs.StringVar(&template, "template", "", "file with a template to generate the data from (- for standard input)")
	fs.StringVar(&mode, "mode", "once", "with --template: once (generate now) or always (on every read)")
	fs.BoolVar(&schema, "schema", false, "with --template: the template is a JSON Schema")
	fs.StringVar(&seed, "seed", "", "with --template --mode once: the seed to generate the data with (default: a random one; decoy generate --seed shows what it gives)")
	fs.StringVar(&o.ProjectID, "project", "", "the project to create the mock in: its id, its name, or WORKSPACE/NAME (needed when you reach more than one)")
	cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"once", "always"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if template != "" && file != "" {
			return usagef("--file and --template exclude each other")
		}
		if template == "" && file == "" {
			return usagef("--file is required (- for standard input), or --template")
		}
		if template != "" && mode != "once" && mode != "always" {
			return usagef("--mode must be once or always")
		}
		if err := checkSeed(seed, template, mode); err != nil {
			return err
		}
		cl, out, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		o.RateLimit, o.MonthlyQuota = rate.value, quota.value
		if o.ProjectID, err = (handles{cl}).project(cmd.Context(), o.ProjectID, ""); err != nil {
			return err
		}
		if template != "" {
			return createFromTemplate(cmd, cl, out, o, templateSource{file: template, mode: mode, schema: schema, seed: seed})
		}
		data, ct, err := openData(cmd, file, o.ContentType)
		if err != nil {
			return err
		}
		defer data.Close()
		o.ContentType = ct
		m, err := cl.CreateMock(cmd.Context(), data, o)
		if err != nil {
			return err
		}
		return out.object(m)
	}
	return cmd
}

func mockListCommand() *cobra.Command {
	var limit int
	var cursor string
	var all bool
	var mq client.MockQuery
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List mocks, in creation order",
		Long: `List mocks in creation order, a page at a time (--all for every page):
those of a project or a workspace, and whose name or id matches --q.`,
		Example: `  decoy mock list
  decoy mock list --q users --project PROJECT_ID
  decoy mock list --all -o json | jq -r '.mocks[].id'`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, true)
	fs := cmd.Flags()
	fs.IntVar(&limit, "limit", 0, "mocks per page, 1-1000 (default: the server's, 100)")
	fs.StringVar(&cursor, "cursor", "", "cursor of the page to show (from next_cursor)")
	fs.BoolVar(&all, "all", false, "follow next_cursor and list every mock")
	fs.StringVar(&mq.ProjectID, "project", "", "list the mocks of this project only: its id, its name, or WORKSPACE/NAME")
	fs.StringVar(&mq.WorkspaceID, "workspace", "", "list the mocks of this workspace only: its id or its name")
	fs.StringVar(&mq.Q, "q", "", "list the mocks whose name contains, or id starts with, this")
	cmd.RegisterFlagCompletionFunc("workspace", a.completeWorkspaces)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, out, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		h := handles{cl}
		if mq.WorkspaceID, err = h.workspace(cmd.Context(), mq.WorkspaceID); err != nil {
			return err
		}
		if mq.ProjectID, err = h.project(cmd.Context(), mq.ProjectID, mq.WorkspaceID); err != nil {
			return err
		}
		page := struct {
			Mocks      []client.Mock `json:"mocks"`
			NextCursor *string       `json:"next_cursor"`
		}{Mocks: []client.Mock{}}
		for {
			mocks, next, err := cl.SearchMocks(cmd.Context(), mq, cursor, limit)
			if err != nil {
				return err
			}
			page.Mocks = append(page.Mocks, mocks...)
			if next == "" {
				break
			}
			if !all {
				page.NextCursor = &next
				break
			}
			cursor = next
		}
		return out.list(page, "mocks", mockColumns, `No mocks. Create one with "decoy mock create --file FILE" or "decoy import FILE".`)
	}
	return cmd
}

// mockIDCommand is a command of one mock, by id: run gets the client, the
// output and the id.
func mockIDCommand(use, short, long, example string, out bool, run func(cmd *cobra.Command, cl *client.Client, o *output, id string) error) *cobra.Command {
	cmd := &cobra.Command{Use: use + " ID", Short: short, Long: long, Example: example, Args: exactArgs(1, "a mock (id or name)")}
	a := addAPIFlags(cmd, out)
	cmd.ValidArgsFunction = a.completeMockIDs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cl, o, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		id, err := (handles{cl}).mock(cmd.Context(), args[0], "")
		if err != nil {
			return err
		}
		return run(cmd, cl, o, id)
	}
	return cmd
}

func mockGetCommand() *cobra.Command {
	return mockIDCommand("get", "Show a mock's settings", "", "  decoy mock get 0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d\n  decoy mock get ID -o json | jq -r .url", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			m, err := cl.GetMock(cmd.Context(), id)
			if err != nil {
				return err
			}
			return o.object(m)
		})
}

func mockDataCommand() *cobra.Command {
	return mockIDCommand("data", "Print a mock's stored data, as stored", "", "  decoy mock data ID > users.json", false,
		func(cmd *cobra.Command, cl *client.Client, _ *output, id string) error {
			_, data, err := cl.Data(cmd.Context(), id)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		})
}

func mockRotateTokenCommand() *cobra.Command {
	return mockIDCommand("rotate-token", "Issue a new token for a private mock",
		"Issue a new token for a private mock and print it, this once. The old token stops\nworking at once: apps that read the mock with it need the new one.",
		"  decoy mock rotate-token ID", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			m, err := cl.RotateToken(cmd.Context(), id)
			if err != nil {
				return err
			}
			return o.object(m)
		})
}

func mockUsageCommand() *cobra.Command {
	return mockIDCommand("usage", "Show a mock's use of its rate limit and monthly quota", "", "  decoy mock usage ID", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			u, err := cl.Usage(cmd.Context(), id)
			if err != nil {
				return err
			}
			if !o.human() {
				return o.json(u)
			}
			limit := func(n int64) string {
				if n == 0 {
					return "unlimited"
				}
				return groupDigits(n)
			}
			fmt.Fprintf(o.w, "this minute:  %s of %s requests\n", groupDigits(u.Minute.Used), limit(u.Minute.Limit))
			fmt.Fprintf(o.w, "this month:   %s of %s responses, counted afresh %s\n", groupDigits(u.Month.Used), limit(u.Month.Limit), o.when(u.Month.ResetsAt))
			return nil
		})
}

func mockDeleteCommand() *cobra.Command {
	return mockIDCommand("delete", "Delete a mock", "Delete a mock, its data and its kept versions. Its URL answers 404 at once.", "  decoy mock delete ID", false,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			if err := cl.DeleteMock(cmd.Context(), id); err != nil {
				return err
			}
			o.done(cmd.ErrOrStderr(), "Deleted mock %s", id)
			return nil
		})
}

func mockUpdateCommand() *cobra.Command {
	var file, ct string
	cmd := mockIDCommand("update", "Replace a mock's data",
		"Replace a mock's data with FILE (- for standard input). The data it replaces is\nkept as a version (decoy mock versions).",
		"  decoy mock update ID --file users.json\n  jq '.[0:10]' big.json | decoy mock update ID --file -", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			data, ct, err := openData(cmd, file, ct)
			if err != nil {
				return err
			}
			defer data.Close()
			m, err := cl.ReplaceData(cmd.Context(), id, data, ct)
			if err != nil {
				return err
			}
			return o.object(m)
		})
	cmd.Flags().StringVar(&file, "file", "", "file with the new data (- for standard input)")
	cmd.Flags().StringVar(&ct, "content-type", "", "content type (default: from the file extension, else application/json)")
	return cmd
}

func mockPatchCommand() *cobra.Command {
	var name, private string
	var status, delay int
	var rate, quota limitFlag
	cmd := mockIDCommand("patch", "Change a mock's settings",
		"Change the settings given, and only those. Turning --private on prints a new token, this once.",
		"  decoy mock patch ID --name users --delay-ms 250\n  decoy mock patch ID --rate-limit default --monthly-quota 0\n  decoy mock patch ID --private true", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			fs := cmd.Flags()
			fields := map[string]any{}
			if fs.Changed("name") {
				fields["name"] = name
			}
			if fs.Changed("private") {
				b, err := strconv.ParseBool(private)
				if err != nil {
					return usagef("--private wants true or false")
				}
				fields["private"] = b
			}
			if fs.Changed("status") {
				fields["status"] = status
			}
			if fs.Changed("delay-ms") {
				fields["delay_ms"] = delay
			}
			if rate.set {
				fields["rate_limit"] = rate.value
			}
			if quota.set {
				fields["monthly_quota"] = quota.value
			}
			if len(fields) == 0 {
				return usagef("patch needs at least one setting to change")
			}
			m, err := cl.UpdateMock(cmd.Context(), id, fields)
			if err != nil {
				return err
			}
			return o.object(m)
		})
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "new name")
	fs.StringVar(&private, "private", "", "true or false (turning it on prints a new token once)")
	fs.IntVar(&status, "status", 0, "HTTP status of successful reads (200-599)")
	fs.IntVar(&delay, "delay-ms", 0, "response delay in milliseconds (0-30000)")
	fs.Var(&rate, "rate-limit", "requests per minute (0: unlimited), or default for the server's")
	fs.Var(&quota, "monthly-quota", "served responses per month (0: unlimited), or default for the server's")
	cmd.RegisterFlagCompletionFunc("private", cobra.FixedCompletions([]string{"true", "false"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// openData opens the data of create or update, and picks its content type:
// the one given, else the one of the file's extension, else JSON. A file
// of more than 1 MiB shows a progress bar on a terminal.
func openData(cmd *cobra.Command, file, ct string) (io.ReadCloser, string, error) {
	if file == "" {
		return nil, "", usagef("--file is required (- for standard input)")
	}
	if ct == "" {
		ct = "application/json"
		if ext := strings.ToLower(filepath.Ext(file)); ext != "" && ext != ".json" {
			if t := mime.TypeByExtension(ext); t != "" {
				ct = t
			}
		}
	}
	if file == "-" {
		return io.NopCloser(cmd.InOrStdin()), ct, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, "", err
	}
	return uploadProgress(cmd.ErrOrStderr(), f, "uploading "+filepath.Base(file)), ct, nil
}
