package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
)

// decoy requests prints a project's request journal (§13.2): a page of it,
// newest first, or with --follow each request as the project answers it.

func requestsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "requests",
		Short: "Show the requests a project answered, newest first, or follow them live",
		Long: `Show the requests a project answered through its routes, and the reads of
its mocks at /mock/{id}: newest first, at most --journal-size of them (the
server's; 1,000 by default). Token headers, auth_token, Authorization and
cookies show as REDACTED.

With --follow, each request is printed as it is answered, oldest first,
until interrupted (Ctrl-C). On a terminal a table; otherwise JSON: the page
as the admin API gives it, or with --follow one entry per line.`,
		Example: `  decoy requests --project default
  decoy requests --project shop --status 404 --path '/p/shop/users*'
  decoy requests --project default --follow
  decoy requests --project default --follow -o json | jq .headers`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, true)
	fs := cmd.Flags()
	project := fs.String("project", "", `the project: its id, its name, or WORKSPACE/NAME (required; "default" is the default project)`)
	follow := fs.BoolP("follow", "f", false, "print each request as it is answered, until interrupted")
	var f decoy.JournalFilter
	fs.StringVar(&f.Method, "method", "", "only requests of this method")
	fs.StringVar(&f.Path, "path", "", "only requests of this path, as they came: under /p/{slug} through the project's prefix, the route's path alone on the project's host ({slug}.localhost); ending in *, a prefix: '/p/shop/users*'")
	fs.IntVar(&f.Status, "status", 0, "only requests answered with this status")
	since := fs.String("since", "", "only requests from this time on (RFC 3339, or a duration ago: 10m)")
	limit := fs.Int("limit", 0, "requests per page, 1-1000 (default: the server's, 100)")
	cursor := fs.String("cursor", "", "cursor of the page to show (from next_cursor)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *project == "" {
			return usagef("--project is required")
		}
		if *since != "" {
			t, err := parseSince(*since, time.Now())
			if err != nil {
				return err
			}
			f.Since = t
		}
		if *follow && (*since != "" || *limit != 0 || *cursor != "") {
			return usagef("--follow prints the requests answered from now on: --since, --limit and --cursor do not go with it")
		}
		cl, out, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		p, err := (handles{cl}).projectOrDefault(cmd.Context(), *project)
		if err != nil {
			return err
		}
		if *follow {
			return followRequests(cmd, cl, p, f, out)
		}
		page, err := cl.Requests(cmd.Context(), p, f, *cursor, *limit)
		if err != nil {
			return err
		}
		return out.list(page, "requests", requestColumns, "No requests.")
	}
	return cmd
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("--since wants a time such as 2026-01-02T15:04:05Z, or a duration ago such as 10m; not %q", s)
}

// followRequests prints each entry of project's journal as it is
// recorded: a row of the table on a terminal, a line of JSON otherwise.
func followRequests(cmd *cobra.Command, cl *client.Client, project string, f decoy.JournalFilter, o *output) error {
	const row = "%-23s  %-7s  %6s  %8s  %-15s  %s\n"
	if o.human() {
		h := make([]any, len(requestColumns))
		for i, c := range requestColumns {
			h[i] = c.header
		}
		fmt.Fprintf(o.w, row, h...)
	}
	enc := json.NewEncoder(o.w)
	enc.SetEscapeHTML(false)
	return cl.FollowRequests(cmd.Context(), project, f, func(e *decoy.JournalEntry) error {
		if !o.human() {
			return enc.Encode(e)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		cells := make([]any, len(requestColumns))
		for i, c := range requestColumns {
			cells[i] = c.cell(o, r)
		}
		_, err = fmt.Fprintf(o.w, row, cells...)
		return err
	})
}

// The table of the journal.
var requestColumns = []column{
	{"TIME (UTC)", func(_ *output, r map[string]json.RawMessage) string {
		var t time.Time
		if json.Unmarshal(r["at"], &t) != nil {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000")
	}},
	{"METHOD", str("method")},
	{"STATUS", func(_ *output, r map[string]json.RawMessage) string { return string(r["status"]) }},
	{"MS", func(_ *output, r map[string]json.RawMessage) string {
		var ms float64
		json.Unmarshal(r["duration_ms"], &ms)
		return fmt.Sprintf("%.1f", ms)
	}},
	{"CLIENT", str("client")},
	// Last: the one of any width.
	{"PATH", func(_ *output, r map[string]json.RawMessage) string {
		var path, query string
		json.Unmarshal(r["path"], &path)
		json.Unmarshal(r["query"], &query)
		if query != "" {
			path += "?" + query
		}
		if string(r["forwarded"]) == "true" {
			path += " (upstream)" // answered by the project's upstream (§14)
		}
		return path
	}},
}
