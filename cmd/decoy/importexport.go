package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/importer"
	"github.com/spf13/cobra"
)

// projectFlag adds --project to the flags of import and export.
func projectFlag(cmd *cobra.Command) *string {
	var project string
	cmd.Flags().StringVar(&project, "project", decoy.DefaultName, `the project: its id, its name, or WORKSPACE/NAME; "default" is the default project`)
	return &project
}

func importCommand() *cobra.Command {
	var o client.ImportOptions
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Make mocks of an OpenAPI description, a json-server db.json or a Decoy export",
		Long: `Make mocks of FILE: an OpenAPI 3.0 or 3.1 description (JSON or YAML), a
json-server db.json, or a Decoy export (a .tar.gz, or a folder written by
decoy export --out DIR). The format is guessed from the content when not
given. All or nothing. Prints what was created and what was skipped, with
why; tokens of private mocks are shown once.`,
		Example: `  decoy import openapi.yaml --project PROJECT_ID
  decoy import db.json --format json-server --dry-run
  decoy import backup.tar.gz --new-ids`,
		Args: exactArgs(1, "one FILE"),
	}
	a := addAPIFlags(cmd, true)
	project := projectFlag(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.Format, "format", "", "openapi, json-server or decoy (default: guessed from the content)")
	fs.BoolVar(&o.NewIDs, "new-ids", false, "give the mocks of a Decoy export fresh ids")
	fs.BoolVar(&o.DryRun, "dry-run", false, "show what would be created and skipped, storing nothing")
	fs.StringVar(&o.BasePath, "base-path", "", "prefix of every route the import makes, e.g. /v1")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"openapi", "json-server", "decoy"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cl, out, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		file, err := openImport(cmd, args[0], &o)
		if err != nil {
			return err
		}
		defer file.Close()
		pid, err := (handles{cl}).projectOrDefault(cmd.Context(), *project)
		if err != nil {
			return err
		}
		res, err := cl.Import(cmd.Context(), pid, file, o)
		if err != nil {
			return err
		}
		if !out.human() {
			return out.json(res) // as -o says: a script gets JSON
		}
		base := ""
		if len(res.Routes) > 0 && !o.DryRun {
			// Where the routes answer: what a frontend takes as its base URL.
			var p struct {
				BaseURL string `json:"base_url"`
			}
			if err := cl.Do(cmd.Context(), "GET", "/admin/v1/projects/"+pid, nil, &p); err == nil {
				base = p.BaseURL
			}
		}
		printImport(out.w, res, o.DryRun, base)
		return nil
	}
	return cmd
}

// openImport opens the file to import. A folder written by decoy export
// --out DIR is packed into an export as it is sent.
func openImport(cmd *cobra.Command, path string, o *client.ImportOptions) (io.ReadCloser, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return uploadProgress(cmd.ErrOrStderr(), f, "uploading "+filepath.Base(path)), nil
	}
	if !importer.HasManifest(path) {
		return nil, fmt.Errorf("%s is a folder without %s: not an export", path, importer.ManifestName)
	}
	dir, err := importer.OpenExportDir(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, decoy.ErrorMessage(err))
	}
	// The archive is written as it is sent, a data file at a time.
	pr, pw := io.Pipe()
	go func() {
		defer dir.Close()
		pw.CloseWithError(dir.WriteTo(pw, time.Now()))
	}()
	o.Format = importer.FormatDecoy
	return pr, nil
}

// printImport prints what an import created, updated and skipped, and the
// routes it made under the project's base URL (when known).
func printImport(w io.Writer, res *client.ImportResult, dryRun bool, base string) {
	if dryRun {
		fmt.Fprintf(w, "Would create %d %s (dry run: nothing was stored)\n", len(res.Created), plural(len(res.Created), "mock"))
	} else {
		fmt.Fprintf(w, "Created %d %s\n", len(res.Created), plural(len(res.Created), "mock"))
	}
	printMocks(w, res.Created, dryRun)
	if len(res.Updated) > 0 {
		verb := "Updated"
		if dryRun {
			verb = "Would update"
		}
		fmt.Fprintf(w, "%s %d %s with new data (a new version each)\n", verb, len(res.Updated), plural(len(res.Updated), "mock"))
		printMocks(w, res.Updated, dryRun)
	}
	if len(res.Routes) > 0 {
		names := map[string]string{}
		for _, m := range append(slices.Clip(res.Created), res.Updated...) {
			names[m.ID] = m.Name
		}
		under := ""
		if base != "" {
			under = ", under " + base
		}
		fmt.Fprintf(w, "Routes (%d%s):\n", len(res.Routes), under)
		width := 0
		for _, r := range res.Routes {
			width = max(width, len(r.Path))
		}
		for _, r := range res.Routes {
			fmt.Fprintf(w, "  %-6s %-*s  %s (%s)\n", r.Method, width, r.Path, names[r.MockID], r.Action)
		}
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "Skipped %d:\n", len(res.Skipped))
		for _, s := range res.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.Source, s.Reason)
		}
	}
}

// printMocks prints mocks an import made, a line each.
func printMocks(w io.Writer, mocks []client.Mock, dryRun bool) {
	width := 0
	for _, m := range mocks {
		width = max(width, len(m.Name))
	}
	for _, m := range mocks {
		line := fmt.Sprintf("  %-*s  %s", width, m.Name, m.URL)
		if dryRun {
			line = fmt.Sprintf("  %-*s  status %d, %d bytes", width, m.Name, m.Status, m.Size)
		}
		if m.Token != "" {
			line += "  token " + m.Token + " (shown once)"
		}
		fmt.Fprintln(w, line)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func exportCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export --out FILE.tar.gz|DIR",
		Short: "Write a project's mocks to a .tar.gz, or unpacked into a folder",
		Long: `Write the project's mocks as a .tar.gz, or unpacked into a folder
(decoy.json and data/<id>.json) to keep in Git. Tokens are never written;
decoy import and decoy serve --seed read it back.`,
		Example: `  decoy export --out backup.tar.gz
  decoy export --project PROJECT_ID --out mocks/`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, false)
	project := projectFlag(cmd)
	cmd.Flags().StringVar(&out, "out", "", "FILE.tar.gz (or .tgz) to write the export to, or a folder to unpack it into (required)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if out == "" {
			return usagef("export needs --out FILE.tar.gz|DIR")
		}
		if err := a.resolve(cmd.Flags(), true); err != nil {
			return err
		}
		pid, err := (handles{a.client()}).projectOrDefault(cmd.Context(), *project)
		if err != nil {
			return err
		}
		body, err := a.client().Export(cmd.Context(), pid)
		if err != nil {
			return err
		}
		defer body.Close()
		if strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz") {
			if err := writeExportFile(out, body); err != nil {
				return err
			}
		} else if err := unpackExport(out, body); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Exported to %s\n", out)
		return nil
	}
	return cmd
}

// writeExportFile writes an export to path, whole or not at all.
func writeExportFile(path string, body io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".decoy-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, body); err != nil {
		tmp.Close()
		return fmt.Errorf("download the export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// unpackExport writes the files of an export into dir, checked as an
// import checks them, and removes the data files of mocks the export no
// longer holds, so that the folder is the project as it is.
func unpackExport(dir string, body io.Reader) error {
	if err := os.MkdirAll(filepath.Join(dir, importer.DataDir), 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	written := map[string]bool{}
	err = importer.WalkExport(body, importer.Limits{MaxDataBytes: 1 << 40, MaxUnpackedBytes: 1 << 50}, func(name string, _ int64, r io.Reader) error {
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		written[name] = true
		return f.Close()
	})
	if err != nil {
		return fmt.Errorf("unpack the export: %s", decoy.ErrorMessage(err))
	}
	if !written[importer.ManifestName] {
		return fmt.Errorf("unpack the export: it was cut short (no %s)", importer.ManifestName)
	}
	old, err := fs.Glob(root.FS(), importer.DataDir+"/*.json")
	if err != nil {
		return err
	}
	for _, name := range old {
		if !written[name] {
			if err := root.Remove(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedExport loads a folder written by decoy export --out DIR as --seed:
// each mock with its id and settings from the manifest.
func (m *Main) seedExport(ctx context.Context, dir string) ([]*decoy.Mock, error) {
	export, err := importer.OpenExportDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--seed %s: %s", dir, decoy.ErrorMessage(err))
	}
	defer export.Close()
	res := export.Result()
	m.seedTokens = map[string]string{}
	var mocks []*decoy.Mock
	for _, in := range res.Mocks {
		// One document at a time, whatever the size of the project.
		data, err := export.ReadData(in, int64(m.Config.MaxDataBytes))
		if err != nil {
			return nil, fmt.Errorf("--seed %s: %s", dir, decoy.ErrorMessage(err))
		}
		mock, changed, token, err := m.server.Admin().SeedMock(ctx, &decoy.Mock{
			ID: in.ID, Name: in.Name, ContentType: in.ContentType, Private: in.Private, Status: in.Status,
			DelayMS: in.DelayMS, RateLimit: in.RateLimit, MonthlyQuota: in.MonthlyQuota,
		}, data, in.Template)
		if err != nil {
			return nil, fmt.Errorf("--seed %s: mock %s: %s", dir, in.ID, decoy.ErrorMessage(err))
		}
		if token != "" {
			m.seedTokens[mock.ID] = token
		}
		m.log.Info("seeded mock", "name", mock.Name, "id", mock.ID, "bytes", len(data), "changed", changed)
		mocks = append(mocks, mock)
	}
	routes := make([]*decoy.Route, len(res.Routes))
	for i, r := range res.Routes {
		routes[i] = &decoy.Route{Method: r.Method, Path: r.Path, MockID: res.Mocks[r.Mock].ID, Action: r.Action, Bind: r.Bind,
			Items: r.Items, RequestSchema: r.RequestSchema, Rules: r.Rules}
	}
	changed, err := m.server.Admin().SeedRoutes(ctx, decoy.DefaultProjectID, routes)
	if err != nil {
		return nil, fmt.Errorf("--seed %s: routes: %s", dir, decoy.ErrorMessage(err))
	}
	if len(routes) > 0 {
		m.log.Info("seeded routes", "routes", len(routes), "changed", changed)
	}
	return mocks, nil
}
