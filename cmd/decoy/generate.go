package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/generate"
	"github.com/spf13/cobra"
)

// generateCommand is decoy generate: a template run locally, with the
// package the server runs, so that a seed gives what the server gives for
// it.
func generateCommand() *cobra.Command {
	var seedText string
	var schema bool
	maxBytes := byteSize(64 << 20)
	cmd := &cobra.Command{
		Use:   "generate FILE",
		Short: "Print the data a template generates, here, without a server",
		Long: `Print the data the template FILE (- for standard input) generates, the
same a server generates for the same seed. FILE is a JSON Schema with
--schema or a name ending in .schema.json. It runs here: no server is
needed. The seed used is printed on standard error.`,
		Example: `  decoy generate people.json
  decoy generate people.json --seed 42 | jq length
  decoy generate user.schema.json`,
		Args: exactArgs(1, "one template file"),
	}
	fs := cmd.Flags()
	fs.StringVar(&seedText, "seed", "", "seed (default: a random one)")
	fs.BoolVar(&schema, "schema", false, "the template is a JSON Schema")
	fs.Var(&maxBytes, "max-bytes", "largest output (bytes, or with KiB, MiB, GiB; KB, MB, GB are powers of 1000)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		seed := generate.NewSeed()
		if seedText != "" {
			var err error
			if seed, err = strconv.ParseUint(seedText, 10, 64); err != nil {
				return usagef("--seed must be an integer of 0 or more")
			}
		}
		body, ct, err := readTemplate(args[0], schema, cmd.InOrStdin())
		if err != nil {
			return err
		}
		lim := generate.Limits{MaxBytes: int(maxBytes), Deadline: time.Now().Add(time.Minute)}
		t, err := generate.Parse(ct, body, lim)
		if err != nil {
			return err
		}
		out, err := t.Run(seed, lim)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "seed: %d\n", seed)
		_, err = cmd.OutOrStdout().Write(append(out, '\n'))
		return err
	}
	return cmd
}

// readTemplate reads a template file (- for standard input) and tells its
// content type.
func readTemplate(file string, schema bool, stdin io.Reader) ([]byte, string, error) {
	ct := "application/json"
	if schema || strings.HasSuffix(strings.ToLower(file), ".schema.json") {
		ct = generate.SchemaContentType
	}
	var body []byte
	var err error
	if file == "-" {
		body, err = io.ReadAll(stdin)
	} else {
		body, err = os.ReadFile(file)
	}
	return body, ct, err
}

// templateSource is what decoy mock create --template makes a mock of: the
// template file, its mode, whether it is a JSON Schema, and the seed it
// runs with (empty: a random one).
type templateSource struct {
	file, mode string
	schema     bool
	seed       string
}

// checkSeed checks --seed of decoy mock create: an integer, given with a
// template in once mode (in always mode every read takes its own seed,
// from the Decoy-Seed header).
func checkSeed(seed, template, mode string) error {
	switch {
	case seed == "":
		return nil
	case template == "":
		return usagef("--seed goes with --template")
	case mode != "once":
		return usagef("--seed goes with --mode once; with --mode always, each read takes its seed from the Decoy-Seed header")
	}
	if _, err := strconv.ParseUint(seed, 10, 64); err != nil {
		return usagef("--seed must be an integer of 0 or more")
	}
	return nil
}

// createFromTemplate creates a mock whose data a template generates: the
// mock is created with an empty array, then given the template, which
// writes its data (once) or generates it on every read (always).
func createFromTemplate(cmd *cobra.Command, cl *client.Client, out *output, o client.CreateOptions, src templateSource) error {
	body, ct, err := readTemplate(src.file, src.schema, cmd.InOrStdin())
	if err != nil {
		return err
	}
	// Checked before anything is created, so that a bad template leaves
	// no mock behind.
	if _, err := generate.Parse(ct, body, generate.Limits{Deadline: time.Now().Add(time.Minute)}); err != nil {
		return err
	}
	o.ContentType = "application/json"
	ctx := cmd.Context()
	m, err := cl.CreateMock(ctx, strings.NewReader("[]"), o)
	if err != nil {
		return err
	}
	tm, _, err := cl.SetTemplateSeed(ctx, m.ID, strings.NewReader(string(body)), ct, src.mode, src.seed)
	if err != nil {
		return fmt.Errorf("mock %s created, but its template was refused: %w", m.ID, err)
	}
	tm.Token = m.Token // shown once, at creation
	return out.object(tm)
}
