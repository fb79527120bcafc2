package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/decoy-mock/decoy/jsondoc"
)

// decoy route calls the routes part of the admin API (§11.2): a project's
// answers at its API's own paths.

// routeCommands are the commands of decoy route.
func routeCommands() []teamCommand {
	return []teamCommand{
		{use: "create", short: "Add a route to a project", args: 0, names: "no argument",
			long: "Add a route: METHOD PATH answers with the mock's data (GET reads; on a collection path POST creates, and on an item path " +
				"PUT, PATCH and DELETE replace, update and delete records). A path is / or segments that are literal or a whole parameter {name}; " +
				"each parameter is an equality condition on the record field it binds (--bind name=field; by default the field of its own name).",
			example: "  decoy route create --project PROJECT --method GET --path /users --mock MOCK\n" +
				"  decoy route create --project PROJECT --method GET --path /users/{id} --mock MOCK\n" +
				"  decoy route create --project PROJECT --method GET --path /teams/{team}/members --mock MOCK --bind team=teamId --items data\n" +
				"  decoy route create --project PROJECT --method GET --path /orders --mock MOCK --rules rules.json",
			flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
				project := fs.String("project", "", `the project: its id, its name, or WORKSPACE/NAME (required)`)
				fields, mock := routeFlags(fs)
				return func(_ []string, in *bufio.Reader) (call, error) {
					if *project == "" {
						return call{}, usagef("--project is required")
					}
					body, err := fields(false, in)
					if err != nil {
						return call{}, err
					}
					// A mock's name is looked for in the route's project.
					body["mock_id"] = mockRef(*mock, *project)
					return call{"POST", "projects/" + projectRef(*project, "") + "/routes", body}, nil
				}
			}},
		{use: "list", short: "List a project's routes", args: 0, names: "no argument", example: "  decoy route list --project PROJECT",
			list: "routes", cols: routeColumns, empty: "No routes.",
			flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
				project := fs.String("project", "", `the project: its id, its name, or WORKSPACE/NAME (required)`)
				return func([]string, *bufio.Reader) (call, error) {
					if *project == "" {
						return call{}, usagef("--project is required")
					}
					return call{"GET", "projects/" + projectRef(*project, "") + "/routes", nil}, nil
				}
			}},
		ofRoute(teamCommand{use: "get ROUTE", short: "Show a route", args: 1, names: "a route (its id, or METHOD PATH with --project)",
			example: "  decoy route get ROUTE\n  decoy route get --project shop 'GET /users/{id}'"},
			func(route string) call { return call{"GET", "routes/" + route, nil} }),
		{use: "update ROUTE", short: "Change a route", args: 1, names: "a route (its id, or METHOD PATH with --project)",
			long: "Change what a route's flags name; the others stay. --items '' makes the route work on the whole data again. " +
				"--rules FILE replaces the route's rules with the JSON array in FILE (- for standard input; [] removes them) and starts their counts again.",
			example: "  decoy route update ROUTE --path /people/{id}\n  decoy route update ROUTE --items data\n  decoy route update ROUTE --rules rules.json\n" +
				"  decoy route update --project shop 'GET /users' --items data",
			flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
				fields, _ := routeFlags(fs)
				project := routeProjectFlag(fs)
				return func(pos []string, in *bufio.Reader) (call, error) {
					body, err := fields(true, in)
					if err != nil {
						return call{}, err
					}
					if len(body) == 0 {
						return call{}, usagef("nothing to change: give --method, --path, --mock, --action, --bind, --items or --rules")
					}
					return call{"PATCH", "routes/" + routeRef(pos[0], *project), body}, nil
				}
			}},
		ofRoute(teamCommand{use: "delete ROUTE", short: "Delete a route", args: 1, names: "a route (its id, or METHOD PATH with --project)",
			example: "  decoy route delete ROUTE\n  decoy route delete --project shop 'DELETE /users/{id}'", done: "Deleted route %s"},
			func(route string) call { return call{"DELETE", "routes/" + route, nil} }),
		ofRoute(teamCommand{use: "rules-reset ROUTE", short: "Start the counts of a route's rules again", args: 1, names: "a route (its id, or METHOD PATH with --project)",
			long:    "A rule with times holds for that many matching requests, counted across replicas; this starts every count of the route's rules again, so that, say, a rule that fails the first two requests fails the next two.",
			example: "  decoy route rules-reset ROUTE"},
			func(route string) call { return call{"POST", "routes/" + route + "/rules/reset", nil} }),
	}
}

// routeProjectFlag adds --project to a command of one route, which its
// METHOD PATH needs.
func routeProjectFlag(fs *pflag.FlagSet) *string {
	return fs.String("project", "", `with a route named by its METHOD PATH: its project (id, name or WORKSPACE/NAME)`)
}

// ofRoute is a command of one route, given by its id or, with --project,
// its METHOD PATH: build gets the route's reference.
func ofRoute(tc teamCommand, build func(route string) call) teamCommand {
	tc.flags = func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
		project := routeProjectFlag(fs)
		return func(pos []string, _ *bufio.Reader) (call, error) { return build(routeRef(pos[0], *project)), nil }
	}
	return tc
}

// routeFlags adds the flags of a route's fields, and gives the body they
// make: on an update only what was set, on a create what is needed. in is
// standard input, which --rules - reads. mock is what --mock holds: a
// mock's id or name.
func routeFlags(fs *pflag.FlagSet) (fields func(update bool, in *bufio.Reader) (map[string]any, error), mock *string) {
	method := fs.String("method", "", "GET, POST, PUT, PATCH or DELETE")
	path := fs.String("path", "", "the path template, e.g. /users/{id}")
	mock = fs.String("mock", "", "the mock the route answers with: its id or its name")
	action := fs.String("action", "", "read, create, replace, update or delete (default: from the method and path)")
	bind := fs.StringArray("bind", nil, "param=field: the record field a path parameter is compared with (repeatable)")
	items := fs.String("items", "", "dot path of the array inside the mock's data the route works on, e.g. data")
	rules := fs.String("rules", "", "a JSON file of the route's rules, an array (- for standard input)")
	return func(update bool, in *bufio.Reader) (map[string]any, error) {
		body := map[string]any{}
		set := func(name, key, v string) {
			if fs.Changed(name) || (!update && v != "") {
				body[key] = v
			}
		}
		set("method", "method", strings.ToUpper(*method))
		set("path", "path", *path)
		set("mock", "mock_id", mockRef(*mock, ""))
		set("action", "action", *action)
		if !update {
			switch {
			case *method == "":
				return nil, usagef("--method is required")
			case *path == "":
				return nil, usagef("--path is required")
			case *mock == "":
				return nil, usagef("--mock is required")
			}
		}
		if fs.Changed("bind") {
			b := map[string]string{}
			for _, pair := range *bind {
				k, v, ok := strings.Cut(pair, "=")
				if !ok || k == "" || v == "" {
					return nil, usagef("--bind wants param=field, e.g. id=userId")
				}
				b[k] = v
			}
			body["bind"] = b
		}
		if fs.Changed("items") {
			if *items == "" {
				body["items"] = nil
			} else {
				body["items"] = *items
			}
		}
		if fs.Changed("rules") {
			r, err := readRules(*rules, in)
			if err != nil {
				return nil, err
			}
			body["rules"] = r
		}
		return body, nil
	}, mock
}

// readRules reads a file of rules (- for standard input): a JSON array,
// sent as it is for the server to check.
func readRules(file string, in io.Reader) (json.RawMessage, error) {
	var b []byte
	var err error
	switch file {
	case "":
		return nil, usagef("--rules wants a file (- for standard input)")
	case "-":
		b, err = io.ReadAll(in)
	default:
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	// What the file holds is no fault of the command line: exit 1, as
	// for a file that cannot be read.
	if _, perr := jsondoc.Parse(b); perr != nil {
		return nil, fmt.Errorf("--rules %s: not valid JSON, at %v: the file must hold a JSON array of rules", file, perr)
	}
	if len(b) == 0 || b[0] != '[' {
		return nil, fmt.Errorf("--rules %s: the file must hold a JSON array of rules", file)
	}
	return json.RawMessage(b), nil
}
