package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/generate"
)

const generateUsage = `Usage: decoy generate FILE [--seed N] [--schema] [--max-bytes B]

Prints the data the template FILE (- for standard input) generates, the
same a server generates for the same seed. FILE is a JSON Schema with
--schema or a name ending in .schema.json. It runs here: no server is
needed. The seed used is printed on standard error.
`

// runGenerate is decoy generate: a template run locally, with the package
// the server runs, so that a seed gives what the server gives for it.
func runGenerate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decoy generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, generateUsage) }
	seedText := fs.String("seed", "", "seed (default: a random one)")
	schema := fs.Bool("schema", false, "the template is a JSON Schema")
	maxBytes := fs.Int("max-bytes", 64<<20, "largest output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("%w: decoy generate needs one template file", errUsage)
	}
	seed := generate.NewSeed()
	if *seedText != "" {
		if seed, err = strconv.ParseUint(*seedText, 10, 64); err != nil {
			return fmt.Errorf("%w: --seed must be an integer of 0 or more", errUsage)
		}
	}
	body, ct, err := readTemplate(pos[0], *schema, stdin)
	if err != nil {
		return err
	}
	t, err := generate.Parse(ct, body)
	if err != nil {
		return err
	}
	out, err := t.Run(seed, generate.Limits{MaxBytes: *maxBytes, Deadline: time.Now().Add(time.Minute)})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "seed: %d\n", seed)
	_, err = stdout.Write(append(out, '\n'))
	return err
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

// createFromTemplate creates a mock whose data a template generates: the
// mock is created with an empty array, then given the template, which
// writes its data (once) or generates it on every read (always).
func (c *mockCommand) createFromTemplate(ctx context.Context, o client.CreateOptions, file, mode string, schema bool, stdin io.Reader) error {
	if mode != "once" && mode != "always" {
		return fmt.Errorf("%w: --mode must be once or always", errUsage)
	}
	body, ct, err := readTemplate(file, schema, stdin)
	if err != nil {
		return err
	}
	// Checked before anything is created, so that a bad template leaves
	// no mock behind.
	if _, err := generate.Parse(ct, body); err != nil {
		return err
	}
	o.ContentType = "application/json"
	cl := c.client()
	m, err := cl.CreateMock(ctx, strings.NewReader("[]"), o)
	if err != nil {
		return err
	}
	tm, _, err := cl.SetTemplate(ctx, m.ID, strings.NewReader(string(body)), ct, mode)
	if err != nil {
		return fmt.Errorf("mock %s created, but its template was refused: %w", m.ID, err)
	}
	tm.Token = m.Token // shown once, at creation
	return c.print(tm)
}
