package decoy

import (
	"context"
	"strings"
	"time"
)

// Teams (§6 of the contract): mocks live in projects, projects in
// workspaces, and people reach a workspace through their role in it.

// Role is a member's or an API key's role in a workspace.
type Role string

const (
	RoleViewer Role = "viewer"
	RoleEditor Role = "editor"
	RoleOwner  Role = "owner"
)

// rank orders the roles; an unknown role ranks below viewer.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether a caller with role r may do what needs role need.
func (r Role) Allows(need Role) bool { return r.rank() > 0 && r.rank() >= need.rank() }

// Errors the team stores return, with the codes the server maps to
// statuses. Stores wrap them with Errorf or return them as they are.
var (
	// ErrLastOwner: removing or demoting the last owner of a workspace (409).
	ErrLastOwner = &Error{Code: ECONFLICT, Message: "A workspace must keep at least one owner"}
	// ErrProjectNotEmpty: deleting a project that holds mocks without
	// cascade (409).
	ErrProjectNotEmpty = &Error{Code: ECONFLICT, Message: "Project is not empty: delete its mocks first, or use ?cascade=true"}
	// ErrEmailTaken: a user with this email (compared case-insensitively)
	// exists (409).
	ErrEmailTaken = &Error{Code: ECONFLICT, Message: "A user with this email exists"}
	// ErrPasswordChanged: a personal access token asked for with a
	// password that was changed since it was checked (401, as a wrong
	// password): no token outlives the password it was given for.
	ErrPasswordChanged = &Error{Code: EUNAUTHORIZED, Message: "Invalid email or password"}
)

// EFORBIDDEN is the code of a caller that sees a resource but lacks the role
// to change it (403), and of a workspace limit reached (403).

// LimitError is a create or an upload past a workspace limit: 403
// {"error":"Workspace limit reached: <Which>"}.
func LimitError(which string) *Error {
	return Errorf(EFORBIDDEN, "Workspace limit reached: %s", which)
}

// User is a person who signs in with an email and a password.
type User struct {
	ID          string    `json:"id"`
	Email       string    `json:"email"`
	Name        string    `json:"name"`
	ServerAdmin bool      `json:"server_admin"`
	CreatedAt   time.Time `json:"created_at"`
	// PasswordHash is the argon2id hash in PHC string form; never shown.
	PasswordHash []byte `json:"-"`
}

// UserUpdate is a PATCH of a user: nil fields stay.
type UserUpdate struct {
	Name         *string
	PasswordHash *[]byte
	ServerAdmin  *bool
	// IfPasswordHash, when set, makes the update apply only while the
	// user's password hash is still this one: else ErrPasswordChanged
	// (a change checked against the current password, which another
	// change replaced meanwhile, must not undo that one).
	IfPasswordHash *[]byte
}

// WorkspaceLimits are set by server admins only; nil is no limit.
type WorkspaceLimits struct {
	MaxMocks     *int64 `json:"max_mocks"`
	MaxBytes     *int64 `json:"max_bytes"`
	MonthlyReads *int64 `json:"monthly_reads"`
}

// Workspace holds projects and members.
type Workspace struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Limits    WorkspaceLimits `json:"limits"`
	CreatedAt time.Time       `json:"created_at"`
}

// LimitNames are the workspace limits, as JSON and the stores name them.
var LimitNames = []string{"max_mocks", "max_bytes", "monthly_reads"}

// WorkspaceUpdate is a PATCH of a workspace: a nil name stays; Limits sets
// the limits it names (a nil value is no limit) and keeps the others.
type WorkspaceUpdate struct {
	Name   *string
	Limits map[string]*int64
}

// Member is a user's role in a workspace.
type Member struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Name   string `json:"name"`
	Role   Role   `json:"role"`
	// Previous is the role PutMember found, in the same transaction:
	// empty for a user who was not a member.
	Previous Role `json:"-"`
}

// Membership is a workspace a user belongs to, with the user's role there.
type Membership struct {
	Workspace Workspace `json:"workspace"`
	Role      Role      `json:"role"`
}

// Project holds mocks; every workspace has one named "default".
type Project struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	// Slug names the project in the URLs of its routes (§11.1): unique on
	// the server. A store derives it from the name at creation (Slugify,
	// SlugCandidate) unless it is set; a rename keeps it.
	Slug string `json:"slug"`
	// Upstream is the base URL of the backend the project stands in for
	// (§14); "" when none.
	Upstream string `json:"upstream"`
	// Mode is ModeMock, ModePassthrough or ModeRecord; a store fills in
	// ModeMock when a project is created without one.
	Mode      string    `json:"mode"`
	CreatedAt time.Time `json:"created_at"`
	// RoutesVersion advances with every change to the project's routes or
	// slug (see RouteStore).
	RoutesVersion int64 `json:"-"`
}

// APIKey is a workspace's key for scripts and CI. Its secret is shown once;
// only its SHA-256 Hash is stored.
type APIKey struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	WorkspaceID string     `json:"workspace_id"`
	Role        Role       `json:"role"`
	ProjectID   *string    `json:"project_id"`
	ExpiresAt   *time.Time `json:"expires_at"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	Hash        []byte     `json:"-"`
}

// AccessToken is a personal access token: it acts as its user until it
// expires, is revoked, or the user's password changes. Only its SHA-256
// Hash is stored; ID, a random UUID, names it in listings and revocations.
type AccessToken struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	UserID     string     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Hash       []byte     `json:"-"`
	// PasswordHash, when set, is the user's password hash the password
	// the token is asked for with was checked against: the token is made
	// only while it is still the user's (ErrPasswordChanged), so that a
	// password change racing a sign-in leaves no token behind.
	PasswordHash []byte `json:"-"`
}

// Invitation adds a person who has no user yet to a workspace: single use,
// found by the SHA-256 Hash of the secret in its URL.
type Invitation struct {
	Hash        []byte
	WorkspaceID string
	Email       string
	Role        Role
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// AuditTarget is what a change was made to.
type AuditTarget struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AuditEntry is one change (§6.4). It never holds a secret or a data body.
type AuditEntry struct {
	WorkspaceID string      `json:"-"`
	At          time.Time   `json:"at"`
	Actor       Actor       `json:"actor"`
	Action      string      `json:"action"`
	Target      AuditTarget `json:"target"`
	IP          string      `json:"ip"`
}

// MockFilter narrows a listing of mocks. Empty fields do not narrow.
type MockFilter struct {
	// WorkspaceIDs, when not nil, are the only workspaces listed (the
	// ones the caller sees); an empty non-nil slice lists nothing.
	WorkspaceIDs []string
	WorkspaceID  string
	ProjectID    string
	// Q matches names (case-insensitively, as a substring) and ids (as a
	// prefix).
	Q string
}

// TeamStore keeps people, workspaces, projects, keys and the audit log.
// Both stores implement it; storetest holds them to one behaviour.
//
// Not-found results are *Error with code ENOTFOUND and the resource's
// not-found text ("User not found", "Workspace not found", "Project not
// found", "Key not found", "Invitation not found").
type TeamStore interface {
	// CreateUser stores u (ID, CreatedAt filled in when empty);
	// ErrEmailTaken when the email exists in any case.
	CreateUser(ctx context.Context, u *User) (*User, error)
	FindUser(ctx context.Context, id string) (*User, error)
	// FindUserByEmail compares emails case-insensitively.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	ListUsers(ctx context.Context, cursor string, limit int) ([]*User, string, error)
	// UpdateUser changes a user; a new PasswordHash ends the user's
	// Studio sessions (SessionStore) and revokes its personal access
	// tokens, in the same transaction.
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	// DeleteUser removes the user, its memberships, its access tokens and
	// its Studio sessions; ErrLastOwner when it is the last owner of a
	// workspace.
	DeleteUser(ctx context.Context, id string) error

	// CreateAccessToken stores t, filling in its ID when empty.
	// ENOTFOUND ("User not found") when the user is gone;
	// ErrPasswordChanged when t.PasswordHash is set and is no longer the
	// user's.
	CreateAccessToken(ctx context.Context, t *AccessToken) error
	// FindAccessToken finds an unexpired token by hash, and its user;
	// ENOTFOUND ("Access token not found") when there is none.
	FindAccessToken(ctx context.Context, hash []byte, now time.Time) (*AccessToken, *User, error)
	// DeleteAccessToken revokes the token of a hash and returns it;
	// ENOTFOUND ("Access token not found").
	DeleteAccessToken(ctx context.Context, hash []byte) (*AccessToken, error)
	// ListAccessTokens lists a user's unexpired tokens, newest first (at
	// most MaxAccessTokens); ENOTFOUND ("User not found").
	ListAccessTokens(ctx context.Context, userID string, now time.Time) ([]*AccessToken, error)
	// RevokeAccessToken revokes the user's token of an id and returns
	// it; ENOTFOUND ("Access token not found") when the user has no such
	// token.
	RevokeAccessToken(ctx context.Context, userID, id string) (*AccessToken, error)
	// TouchAccessTokens records tokens' last use by id, batched by the
	// server as TouchKeys is; a time never goes back.
	TouchAccessTokens(ctx context.Context, used map[string]time.Time) error

	// CreateWorkspace stores a workspace with its "default" project and,
	// when ownerID is not empty, that user as its owner, in one
	// transaction.
	CreateWorkspace(ctx context.Context, w *Workspace, ownerID string) (*Workspace, error)
	FindWorkspace(ctx context.Context, id string) (*Workspace, error)
	// ListWorkspaces lists every workspace when userID is empty, else
	// those the user is a member of.
	ListWorkspaces(ctx context.Context, userID string) ([]*Workspace, error)
	UpdateWorkspace(ctx context.Context, id string, upd WorkspaceUpdate) (*Workspace, error)
	// DeleteWorkspace removes the workspace with its projects, mocks,
	// keys, members, invitations and audit log; it returns the ids of the
	// mocks it removed, for the caches.
	DeleteWorkspace(ctx context.Context, id string) ([]string, error)
	// WorkspaceUsage is the number of mocks of a workspace and the bytes
	// they hold, kept versions and live data included (see LiveStore).
	WorkspaceUsage(ctx context.Context, id string) (mocks, bytes int64, err error)

	ListMembers(ctx context.Context, workspaceID string) ([]*Member, error)
	// MemberRole is the user's role in the workspace; ENOTFOUND
	// ("Workspace not found") when the user is not a member.
	MemberRole(ctx context.Context, workspaceID, userID string) (Role, error)
	// PutMember adds the user with role or changes its role; ErrLastOwner
	// when that demotes the last owner.
	PutMember(ctx context.Context, workspaceID, userID string, role Role) (*Member, error)
	// RemoveMember: ErrLastOwner when the user is the last owner.
	RemoveMember(ctx context.Context, workspaceID, userID string) error
	Memberships(ctx context.Context, userID string) ([]Membership, error)

	CreateInvitation(ctx context.Context, inv *Invitation) error
	FindInvitation(ctx context.Context, hash []byte, now time.Time) (*Invitation, error)
	// ListInvitations lists a workspace's pending (unexpired)
	// invitations, oldest first (at most MaxMembers, the bound of members
	// and invitations together); ENOTFOUND ("Workspace not found").
	ListInvitations(ctx context.Context, workspaceID string, now time.Time) ([]*Invitation, error)
	// RevokeInvitation deletes the pending invitation of an email (in any
	// case) to a workspace and returns it, so that its link no longer
	// works; ENOTFOUND ("Invitation not found") when there is none.
	RevokeInvitation(ctx context.Context, workspaceID, email string, now time.Time) (*Invitation, error)
	// AcceptInvitation uses the invitation once: it creates the user
	// with the invitation's email and its membership, and deletes the
	// invitation, in one transaction. When a user with that email exists
	// (made since the invitation), it is ErrEmailTaken and the invitation
	// stays: an invitation never signs anyone in as an existing account.
	AcceptInvitation(ctx context.Context, hash []byte, now time.Time, u *User) (*User, error)

	// CreateProject stores p (ID, CreatedAt filled in when empty) with its
	// Slug, or, when that is empty, one derived from its name: Slugify,
	// then SlugCandidate 1, 2, … until one is free. ErrSlugTaken when the
	// slug given is taken, EINVALID "Invalid slug" when it is no slug.
	CreateProject(ctx context.Context, p *Project) (*Project, error)
	FindProject(ctx context.Context, id string) (*Project, error)
	ListProjects(ctx context.Context, workspaceID string) ([]*Project, error)
	RenameProject(ctx context.Context, id, name string) (*Project, error)
	// DeleteProject: ErrProjectNotEmpty when it holds mocks and cascade is
	// false; with cascade its mocks go too, and their ids are returned.
	DeleteProject(ctx context.Context, id string, cascade bool) ([]string, error)

	CreateKey(ctx context.Context, k *APIKey) (*APIKey, error)
	ListKeys(ctx context.Context, workspaceID string) ([]*APIKey, error)
	// FindKey finds an unrevoked key by the hash of its secret; the
	// caller checks ExpiresAt.
	FindKey(ctx context.Context, hash []byte) (*APIKey, error)
	RevokeKey(ctx context.Context, workspaceID, id string) error
	// TouchKeys records keys' last use, batched by the server so that a
	// request never waits on a write.
	TouchKeys(ctx context.Context, used map[string]time.Time) error

	AppendAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit pages a workspace's log, newest first.
	ListAudit(ctx context.Context, workspaceID, cursor string, limit int) ([]*AuditEntry, string, error)

	// SearchMocks lists mocks as ListMocks does, narrowed by f.
	SearchMocks(ctx context.Context, f MockFilter, cursor string, limit int) ([]*Mock, string, error)
}

// EmailKey is the form of an email that stores compare: emails are unique
// and found whatever their case.
func EmailKey(email string) string { return strings.ToLower(email) }

// Bounds of what grows with use and is listed whole, so that no listing
// grows without end. Past them a create is EINVALID, except access tokens:
// a user's oldest go first.
const (
	// MaxAccessTokens is the most personal access tokens a user holds.
	MaxAccessTokens = 100
	// MaxProjects is the most projects a workspace holds.
	MaxProjects = 200
	// MaxKeys is the most API keys a workspace holds, revoked ones aside.
	MaxKeys = 200
	// MaxMembers is the most members and pending invitations a workspace
	// holds, and the most workspaces a user is a member of.
	MaxMembers = 1000
	// MaxWorkspaces is the most workspaces ListWorkspaces lists.
	MaxWorkspaces = 10000
	// MaxAuditEntries is the most entries of a workspace's audit log (or
	// of the entries of no workspace) that are kept: older ones go, a few
	// at a time, as new ones come.
	MaxAuditEntries = 100000
	// MaxPage is the largest page ListUsers, ListAudit and SearchMocks
	// give: a larger limit gives this many.
	MaxPage = 1000
)
