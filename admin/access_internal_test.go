package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/secret"
)

// people is a TeamStore of users signed in by token, each with one
// membership.
type people struct {
	decoy.TeamStore
	roles map[string]decoy.Role // by token
}

func (p *people) FindAccessToken(_ context.Context, hash []byte, _ time.Time) (*decoy.AccessToken, *decoy.User, error) {
	for tok := range p.roles {
		if string(secret.Hash(tok)) == string(hash) {
			return &decoy.AccessToken{ID: tok, UserID: tok, Hash: hash}, &decoy.User{ID: tok}, nil
		}
	}
	return nil, nil, decoy.Errorf(decoy.ENOTFOUND, "not found")
}

// TouchAccessTokens drops the last uses of tokens.
func (p *people) TouchAccessTokens(context.Context, map[string]time.Time) error { return nil }

func (p *people) Memberships(_ context.Context, userID string) ([]decoy.Membership, error) {
	return []decoy.Membership{{Workspace: decoy.Workspace{ID: "w"}, Role: p.roles[userID]}}, nil
}

// A route that needs a role and names no resource needs that role in some
// workspace.
func TestRouteOfNoResource(t *testing.T) {
	saved := adminRoutes
	t.Cleanup(func() { adminRoutes = saved })
	adminRoutes = append(adminRoutes, adminRoute{method: "POST", path: "preview", need: editor, action: "previewing",
		handle: func(_ *API, w http.ResponseWriter, _ *http.Request, _ string) error {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}})
	viewer, editorTok := "dcy_pat_vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", "dcy_pat_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	s := New(Config{Store: nil, Teams: &people{roles: map[string]decoy.Role{viewer: decoy.RoleViewer, editorTok: decoy.RoleEditor}},
		AdminTokenHash: secret.Hash("admin")})
	for _, tc := range []struct {
		token string
		want  int
	}{{"admin", 204}, {editorTok, 204}, {viewer, 403}, {"", 401}} {
		req := httptest.NewRequest("POST", "/admin/v1/preview", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		serve(s, rec, req)
		if rec.Code != tc.want {
			t.Errorf("%q: %d %s, want %d", tc.token, rec.Code, rec.Body, tc.want)
		}
	}
}

// serve answers req with a, writing the status of an error it returns
// as the server would.
func serve(a *API, w http.ResponseWriter, r *http.Request) {
	if err := a.Serve(w, r); err != nil {
		status, msg, _ := answer.Of(err)
		http.Error(w, msg, status)
	}
}

func TestKeyUsesBounded(t *testing.T) {
	s := New(Config{})
	s.keyUses.flushing = true // a flush in flight: uses wait
	for i := range maxKeyUses + 10 {
		s.keyUsed(strconv.Itoa(i), time.Now())
	}
	if n := len(s.keyUses.used); n != maxKeyUses {
		t.Errorf("%d key uses kept, bound %d", n, maxKeyUses)
	}
}
