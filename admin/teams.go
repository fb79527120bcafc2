package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/password"
	"github.com/decoy-mock/decoy/secret"
)

// This file is the admin API of teams (§6.3 of the contract): users,
// personal access tokens, invitations, workspaces, members, API keys and
// projects. Serve has checked the caller's role before a handler here
// runs (access.go); handlers only narrow listings to what the caller sees.

// decodeBody decodes the JSON object of a request into v, refusing unknown
// fields; fields lists the ones accepted, for the error.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, fields string) error {
	return decodeBodyUpTo(w, r, v, fields, maxPatchBytes)
}

// decodeBodyUpTo is decodeBody for a body of at most limit bytes.
func decodeBodyUpTo(w http.ResponseWriter, r *http.Request, v any, fields string, limit int64) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return decoy.Errorf(decoy.ETOOLARGE, "The body is at most %d bytes", limit)
	case err != nil:
		return decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	}
	return parseBody(body, v, fields)
}

// parseBody is the parsing half of decodeBody. A body that is not UTF-8
// is refused, as RFC 8259 asks, rather than decoded with each bad byte
// replaced by U+FFFD: two passwords that differ only there would match.
func parseBody(body []byte, v any, fields string) error {
	if !utf8.Valid(body) {
		return decoy.NotUTF8(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return decoy.Errorf(decoy.EINVALID, "The body must be a JSON object with %s", fields)
	}
	if err := dec.Decode(v); err != nil || len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return notTheBody(body, v, err, fields)
	}
	return nil
}

// notTheBody says what is wrong with a body that is a JSON object but not
// the one asked for, then what is asked for: where its JSON breaks, a
// field it may not have, or one of another type.
func notTheBody(body []byte, v any, err error, fields string) error {
	want := "the body must be a JSON object with " + fields
	var typ *json.UnmarshalTypeError
	switch {
	case !json.Valid(body):
		if _, perr := jsondoc.Parse(body); perr != nil {
			return decoy.Errorf(decoy.EINVALID, "Invalid JSON at %s; %s", perr, want)
		}
	case errors.As(err, &typ) && typ.Field != "":
		path, ft := jsonField(reflect.TypeOf(v), strings.Split(typ.Field, "."))
		if path == "" {
			break
		}
		if k := ft.Kind(); (k == reflect.Map || k == reflect.Slice || k == reflect.Array) && deref(typ.Type) != ft {
			// The value not of its type is one the field holds.
			return decoy.Errorf(decoy.EINVALID, "Each value of %s must be %s; %s", path, jsonType(typ.Type), want)
		}
		return decoy.Errorf(decoy.EINVALID, "%s must be %s; %s", path, jsonType(typ.Type), want)
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		return decoy.Errorf(decoy.EINVALID, "Unknown field %s; %s", strings.TrimPrefix(err.Error(), "json: unknown field "), want)
	}
	return decoy.Errorf(decoy.EINVALID, "The body must be a JSON object with %s", fields)
}

// jsonField follows path, encoding/json's path of a field in a value of
// type t (JSON names, and the Go names of the structs t embeds, which the
// body has none for), and returns the field's path as the body names it,
// with its type; "" when t has no such field.
func jsonField(t reflect.Type, path []string) (string, reflect.Type) {
	var names []string
	for _, name := range path {
		t = deref(t)
		if t.Kind() != reflect.Struct {
			return "", nil
		}
		ft, inlined := fieldOf(t, name, 0)
		if ft == nil {
			return "", nil
		}
		if !inlined {
			names = append(names, name)
		}
		t = ft
	}
	if len(names) == 0 {
		return "", nil
	}
	return strings.Join(names, "."), deref(t)
}

// maxEmbedding bounds how deep fieldOf looks into embedded structs: a
// type may embed itself through a pointer.
const maxEmbedding = 8

// fieldOf returns the type of struct t's field that the JSON name name
// stands for, looked for in the structs it embeds too; or, inlined, that
// of the struct t embeds under the Go name name. nil when there is none.
func fieldOf(t reflect.Type, name string, depth int) (ft reflect.Type, inlined bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			et := deref(f.Type)
			if et.Kind() != reflect.Struct {
				continue
			}
			if f.Name == name {
				return et, true
			}
			if depth < maxEmbedding {
				if ft, _ := fieldOf(et, name, depth+1); ft != nil {
					return ft, false
				}
			}
			continue
		}
		if tag == name || tag == "" && strings.EqualFold(f.Name, name) {
			return f.Type, false
		}
	}
	return nil, false
}

// deref is t, or what it points to.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonType names the JSON type a Go type is decoded from.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another type"
}

// validLabel checks the name of a workspace, project, key or user.
func validLabel(what, name string) error {
	if strings.TrimSpace(name) == "" || len(name) > decoy.MaxNameLength || !utf8.ValidString(name) {
		return decoy.Errorf(decoy.EINVALID, "%s must be valid UTF-8 of 1 to %d bytes", what, decoy.MaxNameLength)
	}
	return nil
}

// validEmail checks an email address, loosely: people know theirs.
func validEmail(email string) error {
	at := strings.LastIndexByte(email, '@')
	if at < 1 || at == len(email)-1 || len(email) > 254 || !utf8.ValidString(email) || strings.ContainsAny(email, " \t\r\n<>") {
		return decoy.Errorf(decoy.EINVALID, "email must be an email address")
	}
	return nil
}

// pageLimit is the limit parameter of a paged listing.
func pageLimit(r *http.Request) (int, error) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return 0, decoy.Errorf(decoy.EINVALID, "limit must be an integer from 1 to 1000")
		}
		limit = n
	}
	return limit, nil
}

// cursorOf is a next cursor as listings show it: null on the last page.
func cursorOf(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}

// baseURL is the URL the server is reached at, for links it gives.
func (s *API) baseURL(r *http.Request) string {
	base := s.cfg.PublicURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return strings.TrimRight(base, "/")
}

// Personal access tokens.

var errBadCredentials = answer.New(http.StatusUnauthorized, "Invalid email or password")

// createAccessToken is POST /auth/token: an email and a password for a
// personal access token. A wrong pair counts against the client's failed
// authentication limit, as a wrong token does.
func (s *API) createAccessToken(w http.ResponseWriter, r *http.Request, _ string) error {
	var in struct {
		Email    string  `json:"email"`
		Password string  `json:"password"`
		Name     *string `json:"name"`
	}
	if err := decodeBody(w, r, &in, "email, password and an optional name"); err != nil {
		return err
	}
	name := defaultTokenName
	if in.Name != nil {
		if err := validLabel("name", *in.Name); err != nil {
			return err
		}
		name = *in.Name
	}
	if s.cfg.Teams == nil {
		return errBadCredentials
	}
	u, err := s.checkPassword(r, in.Email, in.Password)
	if err != nil {
		return err
	}
	token, t, err := s.issueAccessToken(r, u, name)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusCreated, struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
		ID        string    `json:"id"`
		Name      string    `json:"name"`
	}{token, t.ExpiresAt, t.ID, t.Name})
	return nil
}

// Names of the personal access tokens that are given none.
const (
	defaultTokenName    = "token"
	invitationTokenName = "invitation"
)

// checkPassword returns the user of an email and password, or refuses
// them, counting the failure.
func (s *API) checkPassword(r *http.Request, email, pw string) (*decoy.User, error) {
	key := s.failureKey(r)
	if err := s.cfg.Clients.AuthBlocked(r, key); err != nil {
		return nil, err
	}
	u, err := s.cfg.Teams.FindUserByEmail(r.Context(), email)
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND || (err == nil && len(u.PasswordHash) == 0):
		password.MatchesNone(pw)
		return nil, s.cfg.Clients.AuthFailed(r, key, errBadCredentials)
	case err != nil:
		return nil, err
	case !password.Matches(pw, u.PasswordHash):
		return nil, s.cfg.Clients.AuthFailed(r, key, errBadCredentials)
	}
	return u, nil
}

// issueAccessToken gives a user a new personal access token, unless its
// password changed since u was read (decoy.ErrPasswordChanged).
func (s *API) issueAccessToken(r *http.Request, u *decoy.User, name string) (string, *decoy.AccessToken, error) {
	token := secret.New(AccessTokenPrefix)
	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	t := &decoy.AccessToken{Name: name, Hash: secret.Hash(token), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(AccessTokenLifetime),
		PasswordHash: u.PasswordHash}
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.cfg.Teams.CreateAccessToken(ctx, t); err != nil {
		return "", nil, err
	}
	return token, t, nil
}

// deleteAccessToken is DELETE /auth/token: it revokes the personal access
// token it is sent with.
func (s *API) deleteAccessToken(w http.ResponseWriter, r *http.Request, _ string) error {
	c := callOf(r).caller
	if c.token == nil {
		return decoy.Errorf(decoy.EINVALID, "Send the personal access token to revoke as the bearer token")
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	t, err := s.cfg.Teams.DeleteAccessToken(ctx, c.token.Hash)
	if err != nil {
		return err
	}
	call := callOf(r)
	call.auditAction, call.auditTarget = "token.revoke", tokenTarget(t)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// tokenView is a personal access token as its listings show it: never its
// secret nor its hash. Current marks the token the request came with.
type tokenView struct {
	*decoy.AccessToken
	Current bool `json:"current"`
}

type tokenList struct {
	Tokens []tokenView `json:"tokens"`
}

// tokenTarget is a token as the audit log names it.
func tokenTarget(t *decoy.AccessToken) *decoy.AuditTarget {
	return &decoy.AuditTarget{Kind: "token", ID: t.ID, Name: t.Name}
}

// listMyTokens is GET /me/tokens: the caller's personal access tokens.
func (s *API) listMyTokens(w http.ResponseWriter, r *http.Request, _ string) error {
	return s.listTokens(w, r, callOf(r).caller.user.ID)
}

// revokeMyToken is DELETE /me/tokens/{token}.
func (s *API) revokeMyToken(w http.ResponseWriter, r *http.Request, _ string) error {
	return s.revokeToken(w, r, callOf(r).caller.user.ID)
}

// errWrongPassword refuses a password change whose current password is
// wrong: a 400, the body's fault, not a 401 (the caller is signed in: a
// 401 would sign a Studio out) nor a 403 (on which a Studio asks again,
// its session having maybe changed); counted as a failed authentication
// all the same.
var errWrongPassword = answer.New(http.StatusBadRequest, "The current password is wrong")

// errPasswordChangedMeanwhile refuses a password change over a password
// that another change replaced while it was checked.
var errPasswordChangedMeanwhile = answer.New(http.StatusConflict, "The password changed meanwhile: sign in again with the new one")

// changeMyPassword is PUT /me/password {"current_password","password"}:
// a user's own new password. As a server admin's reset, it revokes every
// personal access token of the user and ends its Studio sessions, the one
// it is sent with included; a wrong current password counts against the
// client's failed authentication limit, as a wrong password at sign-in.
func (s *API) changeMyPassword(w http.ResponseWriter, r *http.Request, _ string) error {
	var in struct {
		Current  *string `json:"current_password"`
		Password *string `json:"password"`
	}
	if err := decodeBody(w, r, &in, "current_password and password"); err != nil {
		return err
	}
	if in.Current == nil || in.Password == nil {
		return decoy.Errorf(decoy.EINVALID, "current_password and password are required")
	}
	if err := password.Valid(*in.Password); err != nil {
		return err
	}
	u := callOf(r).caller.user
	key := s.failureKey(r)
	if err := s.cfg.Clients.AuthBlocked(r, key); err != nil {
		return err
	}
	if !password.Matches(*in.Current, u.PasswordHash) {
		return s.cfg.Clients.AuthFailed(r, key, errWrongPassword)
	}
	h := password.Hash(*in.Password)
	ctx, cancel := writeContext(r)
	defer cancel()
	// Only over the password just checked: a change made meanwhile (a
	// server admin's reset, or this user's change in another request)
	// stands.
	u, err := s.cfg.Teams.UpdateUser(ctx, u.ID, decoy.UserUpdate{PasswordHash: &h, IfPasswordHash: &u.PasswordHash})
	if errors.Is(err, decoy.ErrPasswordChanged) {
		return errPasswordChangedMeanwhile
	}
	if err != nil {
		return err
	}
	callOf(r).auditTarget = &decoy.AuditTarget{Kind: "user", ID: u.ID, Name: u.Email}
	answer.JSON(w, http.StatusOK, u)
	return nil
}

// listUserTokens is GET /users/{user}/tokens (server admins).
func (s *API) listUserTokens(w http.ResponseWriter, r *http.Request, _ string) error {
	return s.listTokens(w, r, callOf(r).params["user"])
}

// revokeUserToken is DELETE /users/{user}/tokens/{token} (server admins).
func (s *API) revokeUserToken(w http.ResponseWriter, r *http.Request, _ string) error {
	return s.revokeToken(w, r, callOf(r).params["user"])
}

// listTokens answers a user's unexpired personal access tokens, newest
// first.
func (s *API) listTokens(w http.ResponseWriter, r *http.Request, userID string) error {
	ts, err := s.cfg.Teams.ListAccessTokens(r.Context(), userID, s.cfg.Now())
	if err != nil {
		return err
	}
	current := callOf(r).caller.token
	out := tokenList{Tokens: make([]tokenView, 0, len(ts))}
	for _, t := range ts {
		out.Tokens = append(out.Tokens, tokenView{AccessToken: t, Current: current != nil && current.ID == t.ID})
	}
	answer.JSON(w, http.StatusOK, out)
	return nil
}

// revokeToken revokes a user's personal access token: refused at once,
// on every replica, as a revoked API key is.
func (s *API) revokeToken(w http.ResponseWriter, r *http.Request, userID string) error {
	call := callOf(r)
	ctx, cancel := writeContext(r)
	defer cancel()
	t, err := s.cfg.Teams.RevokeAccessToken(ctx, userID, call.params["token"])
	if err != nil {
		return err
	}
	call.auditTarget = tokenTarget(t)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Invitations.

// invitationView is an invitation as the person invited sees it.
type invitationView struct {
	Email     string     `json:"email"`
	Role      decoy.Role `json:"role"`
	Workspace struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"workspace"`
	ExpiresAt time.Time `json:"expires_at"`
}

var errInvitationNotFound = answer.New(http.StatusNotFound, "Invitation not found")

// findInvitation finds the live invitation of a secret; a wrong secret
// counts against the client's failed-authentication limit.
func (s *API) findInvitation(r *http.Request, invitation string) (*decoy.Invitation, error) {
	key := s.failureKey(r)
	if err := s.cfg.Clients.AuthBlocked(r, key); err != nil {
		return nil, err
	}
	if s.cfg.Teams == nil || !strings.HasPrefix(invitation, invitationPrefix) || len(invitation) != len(invitationPrefix)+secret.Length {
		return nil, s.cfg.Clients.AuthFailed(r, key, errInvitationNotFound)
	}
	inv, err := s.cfg.Teams.FindInvitation(r.Context(), secret.Hash(invitation), s.cfg.Now())
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		return nil, s.cfg.Clients.AuthFailed(r, key, errInvitationNotFound)
	}
	return inv, err
}

// getInvitation is GET /invitations/{secret}: what Studio shows before the
// person accepts.
func (s *API) getInvitation(w http.ResponseWriter, r *http.Request, _ string) error {
	inv, err := s.findInvitation(r, callOf(r).params["secret"])
	if err != nil {
		return err
	}
	ws, err := s.cfg.Teams.FindWorkspace(r.Context(), inv.WorkspaceID)
	if err != nil {
		return err
	}
	v := invitationView{Email: inv.Email, Role: inv.Role, ExpiresAt: inv.ExpiresAt}
	v.Workspace.ID, v.Workspace.Name = ws.ID, ws.Name
	answer.JSON(w, http.StatusOK, v)
	return nil
}

// acceptInvitation is POST /invitations/{secret}/accept with a name and a
// password: it makes the user (or finds the one of the invitation's email)
// a member, and signs it in with a personal access token.
func (s *API) acceptInvitation(w http.ResponseWriter, r *http.Request, _ string) error {
	call := callOf(r)
	invitation := call.params["secret"]
	var in struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := decodeBody(w, r, &in, "name and password"); err != nil {
		return err
	}
	if err := validLabel("name", in.Name); err != nil {
		return err
	}
	if err := password.Valid(in.Password); err != nil {
		return err
	}
	inv, err := s.findInvitation(r, invitation)
	if err != nil {
		return err
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	u, err := s.cfg.Teams.AcceptInvitation(ctx, secret.Hash(invitation), s.cfg.Now(), &decoy.User{
		Email: inv.Email, Name: in.Name, PasswordHash: password.Hash(in.Password),
	})
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		return errInvitationNotFound // used meanwhile
	}
	if errors.Is(err, decoy.ErrEmailTaken) {
		return decoy.Errorf(decoy.ECONFLICT, "%s has an account already: sign in with it, and ask an owner of the workspace to add it as a member", inv.Email)
	}
	if err != nil {
		return err
	}
	token, t, err := s.issueAccessToken(r, u, invitationTokenName)
	if err != nil {
		return err
	}
	call.caller = &caller{user: u}
	call.auditWorkspace, call.auditAction = inv.WorkspaceID, "member.join"
	call.auditTarget = &decoy.AuditTarget{Kind: "user", ID: u.ID, Name: u.Email}
	answer.JSON(w, http.StatusCreated, struct {
		User      *decoy.User `json:"user"`
		Token     string      `json:"token"`
		ExpiresAt time.Time   `json:"expires_at"`
	}{u, token, t.ExpiresAt})
	return nil
}

// Me.

// meView is who the caller is, with the workspaces it reaches and the
// server's limits (what Studio checks a file against before sending it).
type meView struct {
	Kind        string             `json:"kind"`
	User        *decoy.User        `json:"user,omitempty"`
	Key         *decoy.APIKey      `json:"key,omitempty"`
	Memberships []decoy.Membership `json:"memberships"`
	Limits      serverLimits       `json:"limits"`
}

// serverLimits are decoy serve's --max-data-bytes, --rate-limit and
// --monthly-quota.
type serverLimits struct {
	MaxDataBytes        int64 `json:"max_data_bytes"`
	DefaultRateLimit    int64 `json:"default_rate_limit"`
	DefaultMonthlyQuota int64 `json:"default_monthly_quota"`
}

// me is GET /me.
func (s *API) me(w http.ResponseWriter, r *http.Request, _ string) error {
	c := callOf(r).caller
	ctx := r.Context()
	v := meView{Kind: c.actor().Kind, User: c.user, Key: c.key, Memberships: []decoy.Membership{},
		Limits: serverLimits{MaxDataBytes: s.cfg.MaxDataBytes, DefaultRateLimit: s.cfg.DefaultRateLimit, DefaultMonthlyQuota: s.cfg.DefaultMonthlyQuota}}
	switch {
	case s.cfg.Teams == nil:
	case c.admin:
		all, err := s.cfg.Teams.ListWorkspaces(ctx, "")
		if err != nil {
			return err
		}
		for _, ws := range all {
			v.Memberships = append(v.Memberships, decoy.Membership{Workspace: *ws, Role: decoy.RoleOwner})
		}
	case c.key != nil:
		ws, err := s.cfg.Teams.FindWorkspace(ctx, c.key.WorkspaceID)
		if err != nil {
			return err
		}
		v.Memberships = append(v.Memberships, decoy.Membership{Workspace: *ws, Role: c.key.Role})
	case c.user != nil:
		ms, err := s.cfg.Teams.Memberships(ctx, c.user.ID)
		if err != nil {
			return err
		}
		v.Memberships = append(v.Memberships, ms...)
	}
	answer.JSON(w, http.StatusOK, v)
	return nil
}

// Users.

type userList struct {
	Users      []*decoy.User `json:"users"`
	NextCursor *string       `json:"next_cursor"`
}

func (s *API) listUsers(w http.ResponseWriter, r *http.Request, _ string) error {
	limit, err := pageLimit(r)
	if err != nil {
		return err
	}
	users, next, err := s.cfg.Teams.ListUsers(r.Context(), r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	if users == nil {
		users = []*decoy.User{}
	}
	answer.JSON(w, http.StatusOK, userList{Users: users, NextCursor: cursorOf(next)})
	return nil
}

func (s *API) createUser(w http.ResponseWriter, r *http.Request, _ string) error {
	var in struct {
		Email       string `json:"email"`
		Name        string `json:"name"`
		Password    string `json:"password"`
		ServerAdmin bool   `json:"server_admin"`
	}
	if err := decodeBody(w, r, &in, "email, name, password and server_admin"); err != nil {
		return err
	}
	if err := validEmail(in.Email); err != nil {
		return err
	}
	if err := validLabel("name", in.Name); err != nil {
		return err
	}
	if err := password.Valid(in.Password); err != nil {
		return err
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	u, err := s.cfg.Teams.CreateUser(ctx, &decoy.User{Email: in.Email, Name: in.Name, ServerAdmin: in.ServerAdmin, PasswordHash: password.Hash(in.Password)})
	if err != nil {
		return err
	}
	callOf(r).auditTarget = &decoy.AuditTarget{Kind: "user", ID: u.ID, Name: u.Email}
	w.Header().Set("Location", "/admin/v1/users/"+u.ID)
	answer.JSON(w, http.StatusCreated, u)
	return nil
}

func (s *API) getUser(w http.ResponseWriter, r *http.Request, _ string) error {
	u, err := s.cfg.Teams.FindUser(r.Context(), callOf(r).params["user"])
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, u)
	return nil
}

func (s *API) patchUser(w http.ResponseWriter, r *http.Request, _ string) error {
	var in struct {
		Name        *string `json:"name"`
		Password    *string `json:"password"`
		ServerAdmin *bool   `json:"server_admin"`
	}
	if err := decodeBody(w, r, &in, "any of name, password and server_admin"); err != nil {
		return err
	}
	upd := decoy.UserUpdate{Name: in.Name, ServerAdmin: in.ServerAdmin}
	if in.Name != nil {
		if err := validLabel("name", *in.Name); err != nil {
			return err
		}
	}
	if in.Password != nil {
		if err := password.Valid(*in.Password); err != nil {
			return err
		}
		h := password.Hash(*in.Password)
		upd.PasswordHash = &h
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	u, err := s.cfg.Teams.UpdateUser(ctx, callOf(r).params["user"], upd)
	if err != nil {
		return err
	}
	callOf(r).auditTarget = &decoy.AuditTarget{Kind: "user", ID: u.ID, Name: u.Email}
	answer.JSON(w, http.StatusOK, u)
	return nil
}

func (s *API) deleteUser(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := writeContext(r)
	defer cancel()
	id := callOf(r).params["user"]
	if err := s.cfg.Teams.DeleteUser(ctx, id); err != nil {
		return err
	}
	callOf(r).auditTarget = &decoy.AuditTarget{Kind: "user", ID: id}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Workspaces.

type workspaceList struct {
	Workspaces []*decoy.Workspace `json:"workspaces"`
}

// listWorkspaces is GET /workspaces: those the caller sees.
func (s *API) listWorkspaces(w http.ResponseWriter, r *http.Request, _ string) error {
	c := callOf(r).caller
	ctx := r.Context()
	var out []*decoy.Workspace
	var err error
	switch {
	case c.key != nil:
		var ws *decoy.Workspace
		ws, err = s.cfg.Teams.FindWorkspace(ctx, c.key.WorkspaceID)
		out = []*decoy.Workspace{ws}
	case c.admin:
		out, err = s.cfg.Teams.ListWorkspaces(ctx, "")
	default:
		out, err = s.cfg.Teams.ListWorkspaces(ctx, c.user.ID)
	}
	if err != nil {
		return err
	}
	if out == nil {
		out = []*decoy.Workspace{}
	}
	answer.JSON(w, http.StatusOK, workspaceList{Workspaces: out})
	return nil
}

// createWorkspace is POST /workspaces: server admins, and any signed-in
// user with --open-workspaces, who becomes its owner.
func (s *API) createWorkspace(w http.ResponseWriter, r *http.Request, _ string) error {
	call := callOf(r)
	c := call.caller
	if !c.admin && !(s.cfg.OpenWorkspaces && c.user != nil) {
		return forbidden("creating workspaces", "server admin")
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := decodeBody(w, r, &in, "name"); err != nil {
		return err
	}
	if err := validLabel("name", in.Name); err != nil {
		return err
	}
	owner := ""
	if c.user != nil {
		owner = c.user.ID
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	ws, err := s.cfg.Teams.CreateWorkspace(ctx, &decoy.Workspace{Name: in.Name}, owner)
	if err != nil {
		return err
	}
	call.auditWorkspace = ws.ID
	call.auditTarget = &decoy.AuditTarget{Kind: "workspace", ID: ws.ID, Name: ws.Name}
	w.Header().Set("Location", "/admin/v1/workspaces/"+ws.ID)
	answer.JSON(w, http.StatusCreated, ws)
	return nil
}

func (s *API) getWorkspace(w http.ResponseWriter, r *http.Request, _ string) error {
	answer.JSON(w, http.StatusOK, callOf(r).workspace)
	return nil
}

// patchWorkspace is PATCH /workspaces/{ws}: name (owners), limits (server
// admins; the limits named are set, null being no limit, and the others
// kept).
func (s *API) patchWorkspace(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Name   *string           `json:"name"`
		Limits map[string]*int64 `json:"limits"`
	}
	if err := decodeBody(w, r, &in, "any of name and limits"); err != nil {
		return err
	}
	if in.Name != nil {
		if err := validLabel("name", *in.Name); err != nil {
			return err
		}
	}
	call.unchanged = in.Name == nil && len(in.Limits) == 0 // nothing asked: nothing to record
	if in.Limits != nil {
		if !call.caller.admin {
			return forbidden("setting workspace limits", "server admin")
		}
		for name, l := range in.Limits {
			if !slices.Contains(decoy.LimitNames, name) {
				return decoy.Errorf(decoy.EINVALID, "limits may hold %s", strings.Join(decoy.LimitNames, ", "))
			}
			if l != nil && *l < 0 {
				return decoy.Errorf(decoy.EINVALID, "limits must be null (none) or integers of 0 or more")
			}
		}
		call.auditAction = "workspace.limits"
	} else if in.Name != nil {
		call.auditAction = "workspace.rename"
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	ws, err := s.cfg.Teams.UpdateWorkspace(ctx, id, decoy.WorkspaceUpdate{Name: in.Name, Limits: in.Limits})
	if err != nil {
		return err
	}
	s.cfg.ReadLimitChanged(id)
	call.workspace = ws
	answer.JSON(w, http.StatusOK, ws)
	return nil
}

// deleteWorkspace is DELETE /workspaces/{ws}, with everything in it, its
// audit log too: the deletion is recorded outside any workspace.
func (s *API) deleteWorkspace(w http.ResponseWriter, r *http.Request, id string) error {
	if id == decoy.DefaultWorkspaceID {
		return decoy.Errorf(decoy.ECONFLICT, "The default workspace cannot be deleted")
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	projects, err := s.cfg.Teams.ListProjects(ctx, id)
	if err != nil {
		return err
	}
	var gone []*decoy.Route
	for _, p := range projects {
		gone = append(gone, s.routesOf(ctx, p.ID, "")...)
	}
	ids, err := s.cfg.Teams.DeleteWorkspace(ctx, id)
	if err != nil {
		return err
	}
	s.dropMocks(ctx, ids)
	for _, p := range projects {
		s.routesChanged(ctx, p.ID)
	}
	s.forgetRules(ctx, gone)
	s.cfg.ReadLimitChanged(id)
	callOf(r).workspaceID = "" // gone, with its log
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// dropMocks drops deleted mocks from the cache, here and on other
// replicas. The caller holds writeMu.
func (s *API) dropMocks(ctx context.Context, ids []string) {
	for _, id := range ids {
		s.announce(ctx, id)
		s.cache.Remove(id)
	}
}

// Members.

type memberList struct {
	Members []*decoy.Member `json:"members"`
}

func (s *API) listMembers(w http.ResponseWriter, r *http.Request, id string) error {
	ms, err := s.cfg.Teams.ListMembers(r.Context(), id)
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []*decoy.Member{}
	}
	answer.JSON(w, http.StatusOK, memberList{Members: ms})
	return nil
}

func validRole(role decoy.Role, roles ...decoy.Role) error {
	for _, r := range roles {
		if role == r {
			return nil
		}
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return decoy.Errorf(decoy.EINVALID, "role must be %s", strings.Join(names, ", "))
}

// invitationAnswer is the answer to adding a member who has no user yet.
type invitationAnswer struct {
	Email         string     `json:"email"`
	Role          decoy.Role `json:"role"`
	InvitationURL string     `json:"invitation_url"`
	ExpiresAt     time.Time  `json:"expires_at"`
}

// addMember is POST /workspaces/{ws}/members: a user with that email
// becomes a member; an email with no user gets an invitation link, single
// use, that Studio opens.
func (s *API) addMember(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Email string     `json:"email"`
		Role  decoy.Role `json:"role"`
	}
	if err := decodeBody(w, r, &in, "email and role"); err != nil {
		return err
	}
	if err := validEmail(in.Email); err != nil {
		return err
	}
	if err := validRole(in.Role, decoy.RoleOwner, decoy.RoleEditor, decoy.RoleViewer); err != nil {
		return err
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	u, err := s.cfg.Teams.FindUserByEmail(ctx, in.Email)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		invitation := secret.New(invitationPrefix)
		now := s.cfg.Now().UTC().Truncate(time.Millisecond)
		inv := &decoy.Invitation{Hash: secret.Hash(invitation), WorkspaceID: id, Email: in.Email, Role: in.Role, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime)}
		if err := s.cfg.Teams.CreateInvitation(ctx, inv); err != nil {
			return err
		}
		call.auditAction = "member.invite"
		call.auditTarget = &decoy.AuditTarget{Kind: "invitation", Name: in.Email}
		answer.JSON(w, http.StatusCreated, invitationAnswer{Email: in.Email, Role: in.Role,
			InvitationURL: s.baseURL(r) + "/#/invite/" + invitation, ExpiresAt: inv.ExpiresAt})
		return nil
	}
	if err != nil {
		return err
	}
	m, err := s.putMember(ctx, call, id, u.ID, in.Role)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusCreated, m)
	return nil
}

// pendingInvitation is an invitation as the list shows it: never its
// secret, which only the answer that made it held.
type pendingInvitation struct {
	Email     string     `json:"email"`
	Role      decoy.Role `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
}

type invitationList struct {
	Invitations []pendingInvitation `json:"invitations"`
}

// listInvitations is GET /workspaces/{ws}/invitations: the invitations
// sent and neither accepted, revoked nor expired, oldest first.
func (s *API) listInvitations(w http.ResponseWriter, r *http.Request, id string) error {
	invs, err := s.cfg.Teams.ListInvitations(r.Context(), id, s.cfg.Now())
	if err != nil {
		return err
	}
	list := invitationList{Invitations: make([]pendingInvitation, 0, len(invs))}
	for _, inv := range invs {
		list.Invitations = append(list.Invitations, pendingInvitation{Email: inv.Email, Role: inv.Role, CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt})
	}
	answer.JSON(w, http.StatusOK, list)
	return nil
}

// revokeInvitation is DELETE /workspaces/{ws}/invitations/{email}: the
// invitation's link stops working at once.
func (s *API) revokeInvitation(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	ctx, cancel := writeContext(r)
	defer cancel()
	inv, err := s.cfg.Teams.RevokeInvitation(ctx, id, call.params["email"], s.cfg.Now())
	if err != nil {
		return err
	}
	call.auditTarget = &decoy.AuditTarget{Kind: "invitation", Name: inv.Email}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// putMember gives a user a role in a workspace. A member who held the
// role already is left as is, and the audit log records nothing.
func (s *API) putMember(ctx context.Context, call *adminCall, ws, userID string, role decoy.Role) (*decoy.Member, error) {
	m, err := s.cfg.Teams.PutMember(ctx, ws, userID, role)
	if err != nil {
		return nil, err
	}
	call.unchanged = m.Previous == role
	call.auditTarget = &decoy.AuditTarget{Kind: "user", ID: m.UserID, Name: m.Email}
	return m, nil
}

var errMemberNotFound = answer.New(http.StatusNotFound, "Member not found")

// member checks that a user is a member of a workspace.
func (s *API) member(ctx context.Context, ws, userID string) error {
	_, err := s.cfg.Teams.MemberRole(ctx, ws, userID)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		return errMemberNotFound
	}
	return err
}

func (s *API) patchMember(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Role decoy.Role `json:"role"`
	}
	if err := decodeBody(w, r, &in, "role"); err != nil {
		return err
	}
	if err := validRole(in.Role, decoy.RoleOwner, decoy.RoleEditor, decoy.RoleViewer); err != nil {
		return err
	}
	userID := call.params["user"]
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.member(ctx, id, userID); err != nil {
		return err
	}
	m, err := s.putMember(ctx, call, id, userID, in.Role)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, m)
	return nil
}

func (s *API) removeMember(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	userID := call.params["user"]
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.member(ctx, id, userID); err != nil {
		return err
	}
	if err := s.cfg.Teams.RemoveMember(ctx, id, userID); err != nil {
		return err
	}
	call.auditTarget = &decoy.AuditTarget{Kind: "user", ID: userID}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// API keys.

type keyList struct {
	Keys []*decoy.APIKey `json:"keys"`
}

func (s *API) listKeys(w http.ResponseWriter, r *http.Request, id string) error {
	keys, err := s.cfg.Teams.ListKeys(r.Context(), id)
	if err != nil {
		return err
	}
	if keys == nil {
		keys = []*decoy.APIKey{}
	}
	answer.JSON(w, http.StatusOK, keyList{Keys: keys})
	return nil
}

// createdKey is a new key with its secret, shown this once.
type createdKey struct {
	*decoy.APIKey
	Secret string `json:"secret"`
}

func (s *API) createKey(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Name      string     `json:"name"`
		Role      decoy.Role `json:"role"`
		ProjectID *string    `json:"project_id"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	if err := decodeBody(w, r, &in, "name, role, project_id and expires_at"); err != nil {
		return err
	}
	if err := validLabel("name", in.Name); err != nil {
		return err
	}
	if err := validRole(in.Role, decoy.RoleEditor, decoy.RoleViewer); err != nil {
		return err
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(s.cfg.Now()) {
		return decoy.Errorf(decoy.EINVALID, "expires_at must be in the future")
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	if in.ProjectID != nil {
		p, err := s.cfg.Teams.FindProject(ctx, *in.ProjectID)
		if err != nil || p.WorkspaceID != id {
			if err != nil && decoy.ErrorCode(err) != decoy.ENOTFOUND {
				return err
			}
			return decoy.Errorf(decoy.EINVALID, "project_id must be a project of this workspace")
		}
	}
	key := secret.New(KeyPrefix)
	k, err := s.cfg.Teams.CreateKey(ctx, &decoy.APIKey{
		Name: in.Name, WorkspaceID: id, Role: in.Role, ProjectID: in.ProjectID, ExpiresAt: in.ExpiresAt, Hash: secret.Hash(key),
	})
	if err != nil {
		return err
	}
	call.auditTarget = &decoy.AuditTarget{Kind: "key", ID: k.ID, Name: k.Name}
	answer.JSON(w, http.StatusCreated, createdKey{APIKey: k, Secret: key})
	return nil
}

func (s *API) revokeKey(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	keyID := call.params["key"]
	ctx, cancel := writeContext(r)
	defer cancel()
	// The audit log names the key as people know it: by its name. A
	// workspace has at most decoy.MaxKeys keys.
	target := &decoy.AuditTarget{Kind: "key", ID: keyID}
	if keys, err := s.cfg.Teams.ListKeys(ctx, id); err == nil {
		for _, k := range keys {
			if k.ID == keyID {
				target.Name = k.Name
			}
		}
	}
	if err := s.cfg.Teams.RevokeKey(ctx, id, keyID); err != nil {
		return err
	}
	call.auditTarget = target
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Projects.

type projectList struct {
	Projects []projectView `json:"projects"`
}

// projectView is a project as the admin API shows it: with its base URL
// (§11.1), where its routes answer.
type projectView struct {
	*decoy.Project
	BaseURL string `json:"base_url"`
}

// viewProject returns p as the admin API shows it.
func (s *API) viewProject(r *http.Request, p *decoy.Project) projectView {
	return projectView{Project: p, BaseURL: s.baseURL(r) + "/p/" + p.Slug}
}

// listProjects is GET /workspaces/{ws}/projects; a key limited to a
// project sees that one only.
func (s *API) listProjects(w http.ResponseWriter, r *http.Request, id string) error {
	c := callOf(r).caller
	ps, err := s.cfg.Teams.ListProjects(r.Context(), id)
	if err != nil {
		return err
	}
	out := []projectView{}
	for _, p := range ps {
		if c.key == nil || c.key.ProjectID == nil || *c.key.ProjectID == p.ID {
			out = append(out, s.viewProject(r, p))
		}
	}
	answer.JSON(w, http.StatusOK, projectList{Projects: out})
	return nil
}

func (s *API) createProject(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Name string `json:"name"`
		upstreamFields
	}
	if err := decodeBody(w, r, &in, "name, and optionally upstream and mode"); err != nil {
		return err
	}
	if err := validLabel("name", in.Name); err != nil {
		return err
	}
	if _, err := upstreamOf(&decoy.Project{}, in.upstreamFields); err != nil {
		return err // checked before the project is made
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	p, err := s.cfg.Teams.CreateProject(ctx, &decoy.Project{WorkspaceID: id, Name: in.Name})
	if err != nil {
		return err
	}
	if in.given() {
		s.writeMu.Lock()
		p, _, err = s.setUpstream(ctx, p, in.upstreamFields)
		s.writeMu.Unlock()
		if err != nil {
			return err
		}
	}
	call.auditTarget = &decoy.AuditTarget{Kind: "project", ID: p.ID, Name: p.Name}
	w.Header().Set("Location", "/admin/v1/projects/"+p.ID)
	answer.JSON(w, http.StatusCreated, s.viewProject(r, p))
	return nil
}

func (s *API) getProject(w http.ResponseWriter, r *http.Request, _ string) error {
	answer.JSON(w, http.StatusOK, s.viewProject(r, callOf(r).project))
	return nil
}

// patchProject is PATCH /projects/{id}: a new name, a new slug (§11.1),
// a new upstream or mode (§14), or several. A new slug moves the project's routes to it at once: the old
// one answers 404.
func (s *API) patchProject(w http.ResponseWriter, r *http.Request, id string) error {
	call := callOf(r)
	var in struct {
		Name *string `json:"name"`
		Slug *string `json:"slug"`
		upstreamFields
	}
	const fields = "any of name, slug, upstream and mode"
	if err := decodeBody(w, r, &in, fields); err != nil {
		return err
	}
	if in.Name == nil && in.Slug == nil && !in.given() {
		return decoy.Errorf(decoy.EINVALID, "The body must be a JSON object with %s", fields)
	}
	if _, err := upstreamOf(call.project, in.upstreamFields); err != nil {
		return err
	}
	if in.Name != nil {
		if err := validLabel("name", *in.Name); err != nil {
			return err
		}
	}
	if in.Slug != nil && !decoy.ValidSlug(*in.Slug) {
		return decoy.Errorf(decoy.EINVALID, "Invalid slug")
	}
	if in.Slug != nil && s.cfg.Routes == nil {
		return answer.New(http.StatusNotImplemented, "This server keeps no routes")
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	p := call.project
	var err error
	if in.Name != nil {
		if p, err = s.cfg.Teams.RenameProject(ctx, id, *in.Name); err != nil {
			return err
		}
	}
	if in.Slug != nil && *in.Slug != p.Slug {
		if p, err = s.cfg.Routes.SetProjectSlug(ctx, id, *in.Slug); err != nil {
			return err
		}
		s.routesChanged(ctx, id)
		call.auditAction = "project.slug"
		if in.Name != nil {
			call.auditAction = "project.update"
		}
	}
	if in.given() {
		var changed bool
		if p, changed, err = s.setUpstream(ctx, p, in.upstreamFields); err != nil {
			return err
		}
		switch {
		case in.Name == nil && in.Slug == nil:
			call.auditAction = "project.upstream"
		case changed:
			call.auditAction = "project.update"
		}
	}
	call.project = p
	answer.JSON(w, http.StatusOK, s.viewProject(r, p))
	return nil
}

// deleteProject is DELETE /projects/{id}: 409 while it holds mocks, unless
// ?cascade=true deletes them too.
func (s *API) deleteProject(w http.ResponseWriter, r *http.Request, id string) error {
	if id == decoy.DefaultProjectID {
		return decoy.Errorf(decoy.ECONFLICT, "The default project of the default workspace cannot be deleted")
	}
	cascade := false
	if v := r.URL.Query().Get("cascade"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return decoy.Errorf(decoy.EINVALID, "cascade must be true or false")
		}
		cascade = b
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	gone := s.routesOf(ctx, id, "")
	ids, err := s.cfg.Teams.DeleteProject(ctx, id, cascade)
	if err != nil {
		return err
	}
	s.dropMocks(ctx, ids)
	s.routesChanged(ctx, id)
	s.forgetRules(ctx, gone)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Mocks.

// errProjectRequired: a caller reaching more than one project creates a
// mock without saying in which.
var errProjectRequired = decoy.Errorf(decoy.EINVALID, "project_id is required")

// placeMock puts a mock to be created in a project: the one asked for, in
// which the caller must be an editor, or the only one the caller reaches
// (the server admin's is the default project).
func (s *API) placeMock(r *http.Request, m *decoy.Mock, projectID string) error {
	if s.cfg.Teams == nil {
		if projectID != "" && projectID != decoy.DefaultProjectID {
			return errProjectNotFound
		}
		m.WorkspaceID, m.ProjectID = decoy.DefaultWorkspaceID, decoy.DefaultProjectID
		return nil
	}
	call := callOf(r)
	c := call.caller
	ctx := r.Context()
	if projectID == "" {
		switch {
		case c.admin:
			projectID = decoy.DefaultProjectID
		case c.key != nil && c.key.ProjectID != nil:
			projectID = *c.key.ProjectID
		default:
			only, err := s.onlyProject(ctx, c)
			if err != nil {
				return err
			}
			projectID = only
		}
	}
	p, err := s.cfg.Teams.FindProject(ctx, projectID)
	if err != nil {
		return err
	}
	role, err := s.roleIn(ctx, c, p.WorkspaceID, p.ID)
	switch {
	case err != nil:
		return err
	case role == "":
		return errProjectNotFound
	case !role.Allows(decoy.RoleEditor):
		return forbidden("creating mocks", string(decoy.RoleEditor))
	}
	m.WorkspaceID, m.ProjectID = p.WorkspaceID, p.ID
	call.auditWorkspace = p.WorkspaceID
	return nil
}

// onlyProject returns the one project a user or a workspace key reaches,
// or errProjectRequired when there are more; with none, a caller who is
// an editor nowhere is forbidden, and one who is is told to make one.
func (s *API) onlyProject(ctx context.Context, c *caller) (string, error) {
	var workspaces []string
	switch {
	case c.key != nil:
		workspaces = []string{c.key.WorkspaceID}
	case c.user != nil:
		ms, err := s.cfg.Teams.Memberships(ctx, c.user.ID)
		if err != nil {
			return "", err
		}
		for _, m := range ms {
			workspaces = append(workspaces, m.Workspace.ID)
		}
	}
	found := ""
	for _, ws := range workspaces {
		ps, err := s.cfg.Teams.ListProjects(ctx, ws)
		if err != nil {
			return "", err
		}
		for _, p := range ps {
			if found != "" {
				return "", errProjectRequired
			}
			found = p.ID
		}
	}
	if found == "" {
		// Nowhere to put it: say why rather than ask for a project.
		editor, err := s.hasRole(ctx, c, decoy.RoleEditor)
		if err != nil {
			return "", err
		}
		if !editor {
			return "", forbidden("creating mocks", string(decoy.RoleEditor))
		}
		return "", decoy.Errorf(decoy.EINVALID, "There is no project to create the mock in: create a project first")
	}
	return found, nil
}

// maxSearchBytes caps the q parameter of a mock search.
const maxSearchBytes = 200

// mockFilter is the filter of GET /mocks: what the query asks for,
// narrowed to what the caller sees.
func (s *API) mockFilter(r *http.Request) (decoy.MockFilter, error) {
	q := r.URL.Query()
	f := decoy.MockFilter{WorkspaceID: q.Get("workspace_id"), ProjectID: q.Get("project_id"), Q: q.Get("q")}
	if len(f.Q) > maxSearchBytes || !utf8.ValidString(f.Q) {
		return f, decoy.Errorf(decoy.EINVALID, "q must be valid UTF-8 of at most %d bytes", maxSearchBytes)
	}
	c := callOf(r).caller
	var err error
	if f.WorkspaceID, err = s.visible(r.Context(), c, "ws", f.WorkspaceID); err != nil {
		return f, err
	}
	if f.ProjectID, err = s.visible(r.Context(), c, "project", f.ProjectID); err != nil {
		return f, err
	}
	switch {
	case c.admin:
	case c.key != nil:
		f.WorkspaceIDs = []string{c.key.WorkspaceID}
		if p := c.key.ProjectID; p != nil {
			f.ProjectID = *p // any other was not found above
		}
	case c.user != nil:
		ms, err := s.cfg.Teams.Memberships(r.Context(), c.user.ID)
		if err != nil {
			return f, err
		}
		f.WorkspaceIDs = []string{}
		for _, m := range ms {
			f.WorkspaceIDs = append(f.WorkspaceIDs, m.Workspace.ID)
		}
	default:
		f.WorkspaceIDs = []string{}
	}
	return f, nil
}

// visible checks that the caller sees the workspace ("ws") or project a
// listing is narrowed to, and returns its id as routes spell it: one it
// cannot see, or that does not exist, is not found, as at its own route.
// An empty id narrows nothing.
func (s *API) visible(ctx context.Context, c *caller, kind, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	notFound := idParams[kind]
	id, ok := decoy.CanonicalID(id)
	if !ok {
		return "", notFound
	}
	if s.cfg.Teams == nil { // one workspace and project
		if (kind == "ws" && id != decoy.DefaultWorkspaceID) || (kind == "project" && id != decoy.DefaultProjectID) {
			return "", notFound
		}
		return id, nil
	}
	workspaceID, projectID := id, ""
	if kind == "project" {
		p, err := s.cfg.Teams.FindProject(ctx, id)
		if err != nil {
			return "", err
		}
		workspaceID, projectID = p.WorkspaceID, p.ID
	} else if _, err := s.cfg.Teams.FindWorkspace(ctx, id); err != nil {
		return "", err
	}
	role, err := s.roleIn(ctx, c, workspaceID, projectID)
	if err != nil {
		return "", err
	}
	if role == "" {
		return "", notFound
	}
	return id, nil
}
