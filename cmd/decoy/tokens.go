package main

import (
	"bufio"
	"encoding/json"
	"net/url"

	"github.com/spf13/pflag"
)

// decoy token lists and revokes personal access tokens (§6.1): the
// caller's own (GET, DELETE /admin/v1/me/tokens), or, for a server admin
// with --user, any user's (/admin/v1/users/{user}/tokens).

// tokenColumns are the columns of decoy token list.
var tokenColumns = []column{
	{"NAME", str("name")}, {"ID", str("id")}, {"CREATED", ago("created_at")}, {"EXPIRES", ago("expires_at")},
	{"LAST USED", func(o *output, r map[string]json.RawMessage) string {
		if string(r["last_used_at"]) == "null" {
			return "never"
		}
		return o.ago(r["last_used_at"])
	}},
	{"CURRENT", yes("current", "yes")},
}

// tokensPath is the collection of the tokens of user, or of the caller
// when user is empty.
func tokensPath(user string) string {
	if user == "" {
		return "me/tokens"
	}
	return "users/" + url.PathEscape(user) + "/tokens"
}

// userFlag adds --user, for server admins.
func userFlag(fs *pflag.FlagSet) *string {
	return fs.String("user", "", "id of the user whose tokens to manage (server admins; default: your own)")
}

// tokenCommands are the commands of decoy token.
func tokenCommands() []teamCommand {
	return []teamCommand{
		{use: "list", short: "List your personal access tokens: name, creation, expiry, last use", args: 0, names: "no argument",
			long: "List your personal access tokens, newest first: never their secrets. CURRENT marks the one this command signed in with. " +
				"A server admin lists any user's with --user.",
			example: "  decoy token list\n  decoy token list --user USER_ID",
			list:    "tokens", cols: tokenColumns, empty: `No personal access tokens. "decoy login" makes one.`,
			flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
				user := userFlag(fs)
				return func([]string, *bufio.Reader) (call, error) { return call{"GET", tokensPath(*user), nil}, nil }
			}},
		{use: "revoke TOKEN_ID", short: "Revoke a personal access token; it stops working at once", args: 1, names: "a token id", done: "Revoked token %s",
			long: "Revoke one of your personal access tokens, by the id decoy token list shows: it is refused at once, on every replica. " +
				"A server admin revokes any user's with --user. A new password revokes all of a user's tokens.",
			example: "  decoy token revoke TOKEN_ID\n  decoy token revoke --user USER_ID TOKEN_ID",
			flags: func(fs *pflag.FlagSet) func([]string, *bufio.Reader) (call, error) {
				user := userFlag(fs)
				return func(pos []string, _ *bufio.Reader) (call, error) {
					return call{"DELETE", tokensPath(*user) + "/" + url.PathEscape(pos[0]), nil}, nil
				}
			}},
	}
}
