package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy/client"
)

const mockUsage = `Usage: decoy mock COMMAND [flags] [ID]

Commands:
  create --file F [--name N] [--private] [--content-type T] [--id ID]
         [--status S] [--delay-ms D] [--rate-limit R] [--monthly-quota Q]
         [--project P]
                         store F (- for standard input) as a new mock, in
                         project P (needed when you reach more than one)
  list [--limit N] [--cursor C] [--all] [--project P] [--workspace W] [--q Q]
                         list mocks in creation order (those of P or W, and
                         whose name or id matches Q)
  get ID                 show a mock's settings
  data ID                print a mock's stored data
  update ID --file F [--content-type T]
                         replace a mock's data
  patch ID [--name N] [--private true|false] [--status S] [--delay-ms D]
         [--rate-limit R|default] [--monthly-quota Q|default]
                         change a mock's settings
  rotate-token ID        issue a new token for a private mock
  usage ID               show a mock's use of its rate limit and quota
  delete ID              delete a mock

Every command takes --server (env DECOY_SERVER, default http://127.0.0.1:8080)
and --admin-token (env DECOY_ADMIN_TOKEN; default: the token of decoy login).
Mocks are printed as JSON.
`

// mockCommand holds the flags every mock command shares.
type mockCommand struct {
	fs     *flag.FlagSet
	server string
	token  string
	stdout io.Writer
}

func newMockCommand(name string, stderr, stdout io.Writer) *mockCommand {
	c := &mockCommand{fs: flag.NewFlagSet("decoy mock "+name, flag.ContinueOnError), stdout: stdout}
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() { fmt.Fprint(stderr, mockUsage) }
	c.fs.StringVar(&c.server, "server", "http://127.0.0.1:8080", "Decoy server address")
	c.fs.StringVar(&c.token, "admin-token", "", "admin API token")
	return c
}

// parse parses args and checks that exactly wantIDs positional arguments
// were given.
func (c *mockCommand) parse(args []string, wantIDs int) ([]string, error) {
	pos, err := parseArgs(c.fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != wantIDs {
		c.fs.Usage()
		if wantIDs == 0 {
			return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
		}
		return nil, fmt.Errorf("%w: %s needs a mock id", errUsage, c.fs.Name())
	}
	if c.token == "" {
		c.token = savedToken(c.server)
	}
	if c.token == "" {
		return nil, fmt.Errorf("no admin token: pass --admin-token, set DECOY_ADMIN_TOKEN, or run decoy login")
	}
	return pos, nil
}

func (c *mockCommand) client() *client.Client { return client.New(c.server, c.token) }

// show prints the answer of a call as JSON, or returns its error.
func (c *mockCommand) show(v any, err error) error {
	if err != nil {
		return err
	}
	return c.print(v)
}

func (c *mockCommand) print(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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

func runMock(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, mockUsage)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	name, args := args[0], args[1:]
	c := newMockCommand(name, stderr, stdout)
	switch name {
	case "create":
		var file, mockName, ct, id string
		var private bool
		var status, delay int
		var rate, quota limitFlag
		c.fs.StringVar(&file, "file", "", "file with the data (- for standard input)")
		c.fs.StringVar(&mockName, "name", "", "name of the mock")
		c.fs.BoolVar(&private, "private", false, "require a token (printed once)")
		c.fs.StringVar(&ct, "content-type", "", "content type (default: from the file extension, else application/json)")
		c.fs.StringVar(&id, "id", "", "UUID to create the mock under (default: random)")
		c.fs.IntVar(&status, "status", 200, "HTTP status of successful reads")
		c.fs.IntVar(&delay, "delay-ms", 0, "response delay in milliseconds (0-30000)")
		c.fs.Var(&rate, "rate-limit", "requests per minute (0: unlimited; default: the server's)")
		c.fs.Var(&quota, "monthly-quota", "served responses per month (0: unlimited; default: the server's)")
		var project string
		c.fs.StringVar(&project, "project", "", "id of the project to create the mock in")
		if _, err := c.parse(args, 0); err != nil {
			return err
		}
		data, ct, err := openData(file, ct, stdin)
		if err != nil {
			return err
		}
		defer data.Close()
		return c.show(c.client().CreateMock(ctx, data, client.CreateOptions{
			ID: id, Name: mockName, Private: private, ContentType: ct, Status: status, DelayMS: delay,
			RateLimit: rate.value, MonthlyQuota: quota.value, ProjectID: project,
		}))

	case "list":
		var limit int
		var cursor string
		var all bool
		c.fs.IntVar(&limit, "limit", 0, "mocks per page (1-1000; default 100)")
		c.fs.StringVar(&cursor, "cursor", "", "cursor of the page to show (from next_cursor)")
		c.fs.BoolVar(&all, "all", false, "follow next_cursor and list every mock")
		var mq client.MockQuery
		c.fs.StringVar(&mq.ProjectID, "project", "", "list the mocks of this project only")
		c.fs.StringVar(&mq.WorkspaceID, "workspace", "", "list the mocks of this workspace only")
		c.fs.StringVar(&mq.Q, "q", "", "list the mocks whose name contains, or id starts with, this")
		if _, err := c.parse(args, 0); err != nil {
			return err
		}
		out := struct {
			Mocks      []client.Mock `json:"mocks"`
			NextCursor *string       `json:"next_cursor"`
		}{Mocks: []client.Mock{}}
		for {
			page, next, err := c.client().SearchMocks(ctx, mq, cursor, limit)
			if err != nil {
				return err
			}
			out.Mocks = append(out.Mocks, page...)
			if next == "" {
				break
			}
			if !all {
				out.NextCursor = &next
				break
			}
			cursor = next
		}
		return c.print(out)

	case "get", "rotate-token", "usage", "delete", "data":
		pos, err := c.parse(args, 1)
		if err != nil {
			return err
		}
		id := pos[0]
		cl := c.client()
		switch name {
		case "get":
			return c.show(cl.GetMock(ctx, id))
		case "rotate-token":
			return c.show(cl.RotateToken(ctx, id))
		case "usage":
			return c.show(cl.Usage(ctx, id))
		case "delete":
			return cl.DeleteMock(ctx, id)
		default:
			_, data, err := cl.Data(ctx, id)
			if err != nil {
				return err
			}
			_, err = stdout.Write(data)
			return err
		}

	case "update":
		var file, ct string
		c.fs.StringVar(&file, "file", "", "file with the new data (- for standard input)")
		c.fs.StringVar(&ct, "content-type", "", "content type (default: from the file extension, else application/json)")
		pos, err := c.parse(args, 1)
		if err != nil {
			return err
		}
		data, ct, err := openData(file, ct, stdin)
		if err != nil {
			return err
		}
		defer data.Close()
		return c.show(c.client().ReplaceData(ctx, pos[0], data, ct))

	case "patch":
		var mockName, private string
		var status, delay int
		var rate, quota limitFlag
		c.fs.StringVar(&mockName, "name", "", "new name")
		c.fs.StringVar(&private, "private", "", "true or false (turning it on prints a new token once)")
		c.fs.IntVar(&status, "status", 0, "HTTP status of successful reads (200-599)")
		c.fs.IntVar(&delay, "delay-ms", 0, "response delay in milliseconds (0-30000)")
		c.fs.Var(&rate, "rate-limit", "requests per minute (0: unlimited), or default")
		c.fs.Var(&quota, "monthly-quota", "served responses per month (0: unlimited), or default")
		pos, err := c.parse(args, 1)
		if err != nil {
			return err
		}
		fields := map[string]any{}
		set := map[string]bool{}
		c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if set["name"] {
			fields["name"] = mockName
		}
		if set["private"] {
			b, err := strconv.ParseBool(private)
			if err != nil {
				return fmt.Errorf("%w: --private wants true or false", errUsage)
			}
			fields["private"] = b
		}
		if set["status"] {
			fields["status"] = status
		}
		if set["delay-ms"] {
			fields["delay_ms"] = delay
		}
		if rate.set {
			fields["rate_limit"] = rate.value
		}
		if quota.set {
			fields["monthly_quota"] = quota.value
		}
		if len(fields) == 0 {
			c.fs.Usage()
			return fmt.Errorf("%w: patch needs at least one setting to change", errUsage)
		}
		return c.show(c.client().UpdateMock(ctx, pos[0], fields))
	}
	fmt.Fprint(stderr, mockUsage)
	return fmt.Errorf("%w: unknown mock command %q", errUsage, name)
}

// openData opens the data of create or update, and picks its content type:
// the one given, else the one of the file's extension, else JSON.
func openData(file, ct string, stdin io.Reader) (io.ReadCloser, string, error) {
	if file == "" {
		return nil, "", fmt.Errorf("%w: --file is required (- for standard input)", errUsage)
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
		return io.NopCloser(stdin), ct, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, "", err
	}
	return f, ct, nil
}
