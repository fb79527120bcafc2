package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/spf13/cobra"
)

// decoy admin-token reset: the way back in for whoever lost the admin
// token decoy serve generated and printed once. It works on the store
// itself, as only someone who holds the server's data directory or
// database can, since the admin API would want the token that was lost.

const adminTokenResetLong = `Replace the admin token that decoy serve generated at its first start
(stored hashed, printed once) with a new one, and print the new one, once.

It works on the store itself, named as decoy serve names it: --data-dir
(DECOY_DATA_DIR), or --database-url (DECOY_DATABASE_URL) for PostgreSQL.

The old token stops working when the server starts again, which also
signs out the Studio sessions opened with it. The embedded store is held
by the server that runs on it, so stop that server first, reset, then
start it again. Replicas on PostgreSQL go on taking the old token until
each restarts: restart them all. A server started with --admin-token (or
DECOY_ADMIN_TOKEN) uses that token, not the generated one.`

// adminTokenCommand is decoy admin-token, which holds reset.
func adminTokenCommand() *cobra.Command {
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Replace the generated admin token with a new one, printed once",
		Long:  adminTokenResetLong,
		Example: `  decoy admin-token reset --data-dir ./decoy-data
  decoy admin-token reset --database-url postgres://decoy@db/decoy`,
		Args: exactArgs(0, "no argument"),
	}
	fs := reset.Flags()
	dataDir := fs.String("data-dir", "./decoy-data", "directory of the embedded store, as decoy serve's --data-dir")
	databaseURL := fs.String("database-url", "", "postgres://... of the PostgreSQL store, as decoy serve's --database-url")
	reset.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyEnv(cmd.Flags()); err != nil {
			return err
		}
		return resetAdminToken(cmd.Context(), *dataDir, *databaseURL, cmd.OutOrStdout())
	}
	return group("admin-token", "Replace a lost generated admin token", "  decoy admin-token reset --data-dir ./decoy-data", reset)
}

// resetAdminToken stores a new generated admin token in the store of
// dataDir or databaseURL, and prints it.
func resetAdminToken(ctx context.Context, dataDir, databaseURL string, stdout io.Writer) error {
	m := &Main{Config: Config{DataDir: dataDir, DatabaseURL: databaseURL, MaxVersions: decoy.DefaultMaxVersions}}
	switch {
	case databaseURL != "" && !strings.HasPrefix(databaseURL, "postgres://") && !strings.HasPrefix(databaseURL, "postgresql://"):
		return fmt.Errorf("--database-url must be a postgres:// or postgresql:// URL")
	case databaseURL == "":
		// Opening would make a new, empty store: a mistyped folder must
		// not get a token that no server reads.
		if _, err := os.Stat(filepath.Join(dataDir, sqlite.FileName)); err != nil {
			return fmt.Errorf("no Decoy store in %s (no %s there): give the --data-dir that decoy serve uses", dataDir, sqlite.FileName)
		}
	}
	s, err := m.openStore(ctx)
	if err != nil {
		if databaseURL == "" {
			return fmt.Errorf("%w; if decoy serve runs on it, stop it first, then reset and start it again", err)
		}
		return err
	}
	token := secret.New(adminTokenPrefix)
	err = s.ResetAdminTokenHash(ctx, secret.Hash(token))
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store the new admin token: %w", err)
	}
	restart := "Start decoy serve again: the old token stops working then."
	if databaseURL != "" {
		restart = "Restart every replica on this database: each goes on taking the old token until it restarts."
	}
	fmt.Fprintf(stdout, "New admin token (shown only once; store it):\n  %s\n"+
		"Use it with the CLI as: export DECOY_ADMIN_TOKEN=%s\n\n"+
		"%s\nA server started with --admin-token (or DECOY_ADMIN_TOKEN) uses that token instead.\n",
		token, token, restart)
	return nil
}

// shellQuote quotes s for a POSIX shell, when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
