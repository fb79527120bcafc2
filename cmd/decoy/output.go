package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// What a command prints for people and for scripts. A command hands its
// answer, as JSON, to an output; the output prints it as JSON (-o json,
// or whenever standard output is not a terminal, so scripts get what they
// always got) or, on a terminal (-o table), as a table of a list or a
// key/value view of one object, with sizes in KiB and MiB and times
// relative to now.

// output is where and how a command prints.
type output struct {
	w      io.Writer
	format string // "json", "table" or "" (table on a terminal, else JSON)
	tty    bool
	now    func() time.Time
	all    bool // the command has --all, which a page's footer offers
}

// isTerminal tells whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// outputFlag adds -o/--output to fs.
func outputFlag(fs *pflag.FlagSet, format *string) {
	fs.StringVarP(format, "output", "o", "", "output format: json or table (default: table on a terminal, else json)")
}

func newOutput(w io.Writer, format string) (*output, error) {
	switch format {
	case "", "json", "table":
	default:
		return nil, usagef("--output must be json or table, not %q", format)
	}
	return &output{w: w, format: format, tty: isTerminal(w), now: time.Now}, nil
}

// human tells whether to print for people.
func (o *output) human() bool { return o.format == "table" || o.format == "" && o.tty }

// json prints v as indented JSON, as the CLI always has.
func (o *output) json(v any) error {
	enc := json.NewEncoder(o.w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// object prints one object: JSON, or a key/value view.
func (o *output) object(v any) error {
	if !o.human() {
		return o.json(v)
	}
	fields, err := orderedFields(v)
	if err != nil {
		return o.json(v)
	}
	generated := false
	for _, f := range fields {
		generated = generated || (f.key == "template_mode" && string(f.raw) == `"always"`)
	}
	tw := tabwriter.NewWriter(o.w, 0, 8, 2, ' ', 0)
	for _, f := range fields {
		if quiet, ok := quietDefaults[f.key]; ok && string(f.raw) == quiet {
			continue
		}
		v := o.value(f.key, f.raw)
		if generated && f.key == "size" {
			v = "generated on every read" // what it stores is no size worth showing
		}
		fmt.Fprintf(tw, "%s:\t%s\n", strings.ReplaceAll(f.key, "_", " "), v)
	}
	return tw.Flush()
}

// quietDefaults are fields a person reading an object is not shown at
// these values, which say "as by default": a project with no upstream, in
// mode mock (§14), reads as projects always did.
var quietDefaults = map[string]string{"upstream": `""`, "mode": `"mock"`}

// column is a column of a table: its header and how a row's cell reads.
type column struct {
	header string
	cell   func(o *output, row map[string]json.RawMessage) string
}

// list prints a list answer: v as JSON, or its items (the array under
// key) as a table with cols. empty is said when there is no item; a
// next_cursor is shown below the table.
func (o *output) list(v any, key string, cols []column, empty string) error {
	if !o.human() {
		return o.json(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var page map[string]json.RawMessage
	if err := json.Unmarshal(b, &page); err != nil {
		return o.json(v)
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(page[key], &rows); err != nil {
		return o.json(v)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(o.w, empty)
		return err
	}
	tw := tabwriter.NewWriter(o.w, 0, 8, 3, ' ', 0)
	for i, c := range cols {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c.header)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		for i, c := range cols {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c.cell(o, r))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var next string
	if json.Unmarshal(page["next_cursor"], &next) == nil && next != "" {
		more := "More: add --cursor " + next
		if o.all {
			more += " (or --all)"
		}
		fmt.Fprintln(o.w, more)
	}
	return nil
}

// done says what a command did when its answer is empty, format taking
// arg: on a terminal on standard output, else on errW (standard error),
// where a script's log shows it and its output, for a program, stays
// empty.
func (o *output) done(errW io.Writer, format, arg string) {
	w := o.w
	if !o.human() {
		w = errW
	}
	fmt.Fprintf(w, format+"\n", arg)
}

type field struct {
	key string
	raw json.RawMessage
}

// orderedFields gives the fields of v's JSON object in their order.
func orderedFields(v any) ([]field, error) {
	b, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var fields []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		fields = append(fields, field{t.(string), raw})
	}
	return fields, nil
}

// value is how a field reads for people: times with how long ago, sizes
// in KiB and MiB, limits left to the server said so, secrets marked as
// shown once.
func (o *output) value(key string, raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "null" {
		switch key {
		case "rate_limit", "monthly_quota":
			return "server default"
		case "max_mocks", "max_bytes", "monthly_reads":
			return "none"
		case "project_id":
			return "all projects"
		case "expires_at", "last_used_at":
			return "never"
		}
		return "-"
	}
	switch {
	case key == "rules" && strings.HasPrefix(s, "["):
		return rulesValue(raw)
	case strings.HasPrefix(s, `"`):
		var str string
		json.Unmarshal(raw, &str)
		if strings.HasSuffix(key, "_at") {
			if t, err := time.Parse(time.RFC3339Nano, str); err == nil {
				return o.when(t)
			}
		}
		if key == "token" || key == "secret" {
			return str + "   (shown this once: keep it now)"
		}
		return str
	case strings.HasPrefix(s, "{"):
		if key == "actor" || key == "target" {
			return o.party(raw)
		}
		if fields, err := orderedFields(raw); err == nil {
			parts := make([]string, len(fields))
			for i, f := range fields {
				parts[i] = strings.ReplaceAll(f.key, "_", " ") + " " + o.value(f.key, f.raw)
			}
			return strings.Join(parts, ", ")
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch key {
		case "size", "max_bytes":
			return humanBytes(n)
		case "delay_ms":
			if n == 0 {
				return "none"
			}
			return groupDigits(n) + " ms"
		}
		return groupDigits(n)
	}
	return s
}

// rulesValue is how a route's rules (§13.1) read for people: how many,
// and each one's name, else its place (from 1); -o json shows them whole.
func rulesValue(raw json.RawMessage) string {
	var rules []struct{ Name string }
	if json.Unmarshal(raw, &rules) != nil || len(rules) == 0 {
		return "none"
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.Name
		if r.Name == "" {
			names[i] = "#" + strconv.Itoa(i+1)
		}
	}
	return count(len(rules), "rule") + ": " + strings.Join(names, ", ")
}

// party is who acted, or what was acted on, in the audit log and versions.
func (o *output) party(raw json.RawMessage) string {
	var p struct{ Kind, ID, Label, Name string }
	json.Unmarshal(raw, &p)
	name := p.Label
	if name == "" {
		name = p.Name
	}
	switch {
	case name != "" && p.Kind != "":
		return p.Kind + " " + name
	case p.Kind == "server_admin":
		return "server admin"
	case p.ID != "":
		return strings.TrimSpace(p.Kind + " " + p.ID)
	}
	return p.Kind
}

// when is a time in UTC, with how long ago it was or how soon it is.
func (o *output) when(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 MST") + " (" + relative(t, o.now()) + ")"
}

// relative says how long before or after now t is, roughly.
func relative(t, now time.Time) string {
	d := now.Sub(t)
	suffix := " ago"
	if d < 0 {
		d, suffix = -d, ""
	}
	var s string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		s = count(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		s = count(int(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		s = count(int(d/(24*time.Hour)), "day")
	case d < 730*24*time.Hour:
		s = count(int(d/(30*24*time.Hour)), "month")
	default:
		s = count(int(d/(365*24*time.Hour)), "year")
	}
	if suffix == "" {
		return "in " + s
	}
	return s + suffix
}

// count is n and word, plural when n is not 1: 6 days.
func count(n int, word string) string { return strconv.Itoa(n) + " " + plural(n, word) }

// ago is a table cell of a time: how long ago (or how soon) it is.
func (o *output) ago(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return relative(t, o.now())
}

// humanBytes writes a size in B, KiB, MiB or GiB, with one decimal.
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + unit
}

// groupDigits writes n with thousands separated: 50,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Cells of tables.

func str(key string) func(*output, map[string]json.RawMessage) string {
	return func(_ *output, r map[string]json.RawMessage) string {
		var s string
		if json.Unmarshal(r[key], &s) != nil || s == "" {
			return "-"
		}
		return s
	}
}

func ago(key string) func(*output, map[string]json.RawMessage) string {
	return func(o *output, r map[string]json.RawMessage) string { return o.ago(r[key]) }
}

func size(key string) func(*output, map[string]json.RawMessage) string {
	return func(_ *output, r map[string]json.RawMessage) string {
		var n int64
		json.Unmarshal(r[key], &n)
		return humanBytes(n)
	}
}

// dataSize is a mock's size, or "generated" for one whose data a template
// makes on every read: what it stores then is no size worth showing.
func dataSize(o *output, r map[string]json.RawMessage) string {
	if string(r["template_mode"]) == `"always"` {
		return "generated"
	}
	return size("size")(o, r)
}

func party(key string) func(*output, map[string]json.RawMessage) string {
	return func(o *output, r map[string]json.RawMessage) string { return o.party(r[key]) }
}

// yes is a column of a boolean: its word when true, blank when false.
func yes(key, word string) func(*output, map[string]json.RawMessage) string {
	return func(_ *output, r map[string]json.RawMessage) string {
		if string(r[key]) == "true" {
			return word
		}
		return ""
	}
}

// The tables of the lists the CLI prints.
var (
	mockColumns = []column{
		{"NAME", str("name")}, {"ID", str("id")}, {"SIZE", dataSize},
		{"ACCESS", func(_ *output, r map[string]json.RawMessage) string {
			if string(r["private"]) == "true" {
				return "private"
			}
			return "open"
		}},
		{"STATUS", func(o *output, r map[string]json.RawMessage) string { return o.value("status", r["status"]) }},
		{"UPDATED", ago("updated_at")},
	}
	versionColumns = []column{
		{"VERSION", func(o *output, r map[string]json.RawMessage) string {
			v := string(r["version"])
			if string(r["current"]) == "true" {
				v += " (current)"
			}
			return v
		}},
		{"SIZE", size("size")}, {"CREATED", ago("created_at")}, {"BY", party("actor")}, {"ETAG", str("etag")},
	}
	userColumns = []column{
		{"EMAIL", str("email")}, {"NAME", str("name")}, {"ID", str("id")},
		{"SERVER ADMIN", yes("server_admin", "yes")}, {"CREATED", ago("created_at")},
	}
	workspaceColumns  = []column{{"NAME", str("name")}, {"ID", str("id")}, {"CREATED", ago("created_at")}}
	projectColumns    = []column{{"NAME", str("name")}, {"SLUG", str("slug")}, {"MODE", str("mode")}, {"ID", str("id")}, {"CREATED", ago("created_at")}}
	routeColumns      = []column{{"METHOD", str("method")}, {"PATH", str("path")}, {"ACTION", str("action")}, {"MOCK", str("mock_id")}, {"ID", str("id")}}
	invitationColumns = []column{{"EMAIL", str("email")}, {"ROLE", str("role")}, {"SENT", func(o *output, r map[string]json.RawMessage) string { return o.ago(r["created_at"]) }},
		{"EXPIRES", func(o *output, r map[string]json.RawMessage) string { return o.ago(r["expires_at"]) }}}
	memberColumns = []column{{"EMAIL", str("email")}, {"NAME", str("name")}, {"ROLE", str("role")}, {"USER ID", str("user_id")}}
	keyColumns    = []column{
		{"NAME", str("name")}, {"ID", str("id")}, {"ROLE", str("role")},
		{"PROJECT", func(o *output, r map[string]json.RawMessage) string { return o.value("project_id", r["project_id"]) }},
		{"EXPIRES", func(o *output, r map[string]json.RawMessage) string {
			if string(r["expires_at"]) == "null" {
				return "never"
			}
			return o.ago(r["expires_at"])
		}},
		{"LAST USED", func(o *output, r map[string]json.RawMessage) string {
			if string(r["last_used_at"]) == "null" {
				return "never"
			}
			return o.ago(r["last_used_at"])
		}},
	}
	auditColumns = []column{
		{"WHEN", ago("at")}, {"ACTOR", party("actor")}, {"ACTION", str("action")}, {"TARGET", party("target")}, {"IP", str("ip")},
	}
)
