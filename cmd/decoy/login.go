package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// decoy login and logout keep a personal access token per server in the
// user's config directory (credentials.json, mode 0600); the other
// commands use it when no --admin-token or DECOY_ADMIN_TOKEN is given.

// credentials are the stored tokens, by server address.
type credentials struct {
	Servers map[string]storedToken `json:"servers"`
}

type storedToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// credentialsPath is where the tokens are stored.
func credentialsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "decoy", "credentials.json"), nil
}

func loadCredentials() (*credentials, error) {
	c := &credentials{Servers: map[string]storedToken{}}
	p, err := credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, c); err != nil {
		return c, fmt.Errorf("%s: %w", p, err)
	}
	if c.Servers == nil {
		c.Servers = map[string]storedToken{}
	}
	return c, nil
}

// save writes the tokens, readable by the user only.
func (c *credentials) save() error {
	p, err := credentialsPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// serverKey is the form of a server address tokens are stored under.
func serverKey(server string) string { return strings.TrimRight(server, "/") }

// savedToken returns the stored token of a server, or "".
func savedToken(server string) string {
	c, err := loadCredentials()
	if err != nil {
		return ""
	}
	t, ok := c.Servers[serverKey(server)]
	if !ok || (!t.ExpiresAt.IsZero() && time.Now().After(t.ExpiresAt)) {
		return ""
	}
	return t.Token
}

func loginCommand() *cobra.Command {
	var email, name string
	var passwordStdin bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Sign in with email and password, and keep a personal token",
		Long: `Ask for an email and a password (or read the password from standard input
with --password-stdin), and store a personal access token (90 days) for
the server in the user's config directory, mode 0600. Commands that get
no --admin-token then use it. The token is named (--name) in "decoy token
list", where it can be revoked; a new password revokes it too.`,
		Example: `  decoy login
  decoy login --server https://decoy.example.com --email ann@example.com
  decoy login --email ann@example.com --password-stdin < password.txt
  decoy login --name "CI runner 3"`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, false)
	cmd.Flags().StringVar(&email, "email", "", "email to sign in with (default: asked)")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from standard input")
	cmd.Flags().StringVar(&name, "name", "", `what the token is for, as "decoy token list" shows it (default "decoy login on <this host's name>")`)
	cmd.Flags().MarkHidden("admin-token")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.resolve(cmd.Flags(), false); err != nil {
			return err
		}
		if name == "" {
			name = defaultLoginName()
		}
		stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		in := bufio.NewReader(stdin)
		var err error
		if email == "" {
			fmt.Fprint(stderr, "Email: ")
			if email, err = readLine(in); err != nil {
				return err
			}
		}
		password, err := askPassword("Password: ", stdin, in, stderr, passwordStdin)
		if err != nil {
			return err
		}
		var tok storedToken
		if err := client.New(a.server, "").Do(cmd.Context(), "POST", "/admin/v1/auth/token",
			map[string]string{"email": email, "password": password, "name": name}, &tok); err != nil {
			return err
		}
		creds, err := loadCredentials()
		if err != nil {
			return err
		}
		creds.Servers[serverKey(a.server)] = tok
		if err := creds.save(); err != nil {
			return err
		}
		p, _ := credentialsPath()
		fmt.Fprintf(stdout, "Signed in to %s as %s until %s; token stored in %s\n", a.server, email, tok.ExpiresAt.Format(time.RFC3339), p)
		return nil
	}
	return cmd
}

// terminal returns stdin as a file when it is a terminal.
func terminal(stdin io.Reader) (*os.File, bool) {
	f, ok := stdin.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

// askPassword reads a password: from the terminal without echo, after
// prompt, when standard input is one and fromStdin is not set; else the
// next line of in (prompted unless fromStdin).
func askPassword(prompt string, stdin io.Reader, in *bufio.Reader, stderr io.Writer, fromStdin bool) (string, error) {
	if f, ok := terminal(stdin); ok && !fromStdin {
		fmt.Fprint(stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		return utf8Password(string(b))
	}
	if !fromStdin {
		fmt.Fprint(stderr, prompt)
	}
	return password(in)
}

// password reads a password from the next line of in.
func password(in *bufio.Reader) (string, error) {
	pw, err := readLine(in)
	if err != nil {
		return "", err
	}
	return utf8Password(pw)
}

// utf8Password refuses a password that is not UTF-8: sent as JSON, its
// bad bytes would become U+FFFD, and the server refuses such a body.
func utf8Password(pw string) (string, error) {
	if !utf8.ValidString(pw) {
		return "", fmt.Errorf("the password is not UTF-8: set the terminal's (or the file's) encoding to UTF-8")
	}
	return pw, nil
}

func passwordCommand() *cobra.Command {
	var passwordStdin bool
	cmd := &cobra.Command{
		Use:   "password",
		Short: "Change your own password",
		Long: `Change the password of the user signed in with decoy login (or whose
personal token --admin-token gives): asks for the current password and the
new one (at least 12 characters), or reads them from the first two lines of
standard input with --password-stdin. A new password revokes every personal
token of the user, the stored one included, and ends its Studio sessions:
sign in again with decoy login. A server admin sets another user's password
with "decoy user patch USER_ID --password-stdin".`,
		Example: `  decoy password
  printf '%s\n%s\n' "$OLD" "$NEW" | decoy password --password-stdin`,
		Args: exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, false)
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the current and the new password from the first two lines of standard input")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.resolve(cmd.Flags(), true); err != nil {
			return err
		}
		// Only a user has a password: said before asking for one.
		var me struct {
			User *struct{} `json:"user"`
		}
		if err := a.client().Do(cmd.Context(), "GET", "/admin/v1/me", nil, &me); err != nil {
			return err
		}
		if me.User == nil {
			return fmt.Errorf("this token is the admin token or an API key, which have no password: sign in as the user with decoy login (or pass its personal token with --admin-token)")
		}
		stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		in := bufio.NewReader(stdin)
		current, err := askPassword("Current password: ", stdin, in, stderr, passwordStdin)
		if err != nil {
			return fmt.Errorf("reading the current password: %w", err)
		}
		next, err := askPassword("New password: ", stdin, in, stderr, passwordStdin)
		if err != nil {
			return fmt.Errorf("reading the new password: %w", err)
		}
		if _, ok := terminal(stdin); ok && !passwordStdin {
			// Typed unseen: a typo would leave the user locked out.
			again, err := askPassword("Repeat the new password: ", stdin, in, stderr, false)
			if err != nil {
				return err
			}
			if again != next {
				return fmt.Errorf("the two new passwords differ: nothing changed")
			}
		}
		var u struct {
			Email string `json:"email"`
		}
		if err := a.client().Do(cmd.Context(), "PUT", "/admin/v1/me/password",
			map[string]string{"current_password": current, "password": next}, &u); err != nil {
			return err
		}
		// The stored token, if the user's, is revoked with the others:
		// forgotten.
		if creds, err := loadCredentials(); err == nil {
			if t, ok := creds.Servers[serverKey(a.server)]; ok {
				err := client.New(a.server, t.Token).Do(cmd.Context(), "GET", "/admin/v1/me", nil, nil)
				var ce *client.Error
				if t.Token == a.token || errors.As(err, &ce) && ce.Status == 401 {
					delete(creds.Servers, serverKey(a.server))
					if err := creds.save(); err != nil {
						return err
					}
				}
			}
		}
		fmt.Fprintf(stdout, "Password of %s changed; every personal token of yours is revoked: sign in again with decoy login\n", u.Email)
		return nil
	}
	return cmd
}

// defaultLoginName names the token of a decoy login given no --name: the
// host it was made on, so that a user who finds it in a listing knows
// where it lives.
func defaultLoginName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "decoy login"
	}
	return truncateName("decoy login on " + host)
}

// truncateName cuts a name to the longest the server takes, on a rune
// boundary.
func truncateName(s string) string {
	if len(s) <= decoy.MaxNameLength {
		return s
	}
	cut := decoy.MaxNameLength
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// readLine reads a line without its end.
func readLine(r *bufio.Reader) (string, error) {
	s, err := r.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	return strings.TrimRight(s, "\r\n"), nil
}

func logoutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "logout",
		Short:   "Revoke and forget the token of decoy login",
		Example: "  decoy logout\n  decoy logout --server https://decoy.example.com",
		Args:    exactArgs(0, "no argument"),
	}
	a := addAPIFlags(cmd, false)
	cmd.Flags().MarkHidden("admin-token")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.resolve(cmd.Flags(), false); err != nil {
			return err
		}
		stdout := cmd.OutOrStdout()
		creds, err := loadCredentials()
		if err != nil {
			return err
		}
		tok, ok := creds.Servers[serverKey(a.server)]
		if !ok {
			fmt.Fprintf(stdout, "Not signed in to %s\n", a.server)
			return nil
		}
		err = client.New(a.server, tok.Token).Do(cmd.Context(), "DELETE", "/admin/v1/auth/token", nil, nil)
		var ce *client.Error
		if err != nil && !(errors.As(err, &ce) && ce.Status == 401) { // 401: revoked or expired already
			return err
		}
		delete(creds.Servers, serverKey(a.server))
		if err := creds.save(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Signed out of %s\n", a.server)
		return nil
	}
	return cmd
}
