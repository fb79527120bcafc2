package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

func wantClientError(t *testing.T, err error, status int, msg string) {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != status || ce.Message != msg {
		t.Errorf("error = %v, want %d %q", err, status, msg)
	}
}

func TestAdminAuthentication(t *testing.T) {
	h := servertest.New(t)
	for _, tc := range []struct {
		name   string
		header []string
		status int
		msg    string
	}{
		{"no header", nil, 401, "Admin token required"},
		{"empty bearer", []string{"Authorization", "Bearer "}, 401, "Admin token required"},
		{"basic scheme", []string{"Authorization", "Basic " + servertest.AdminToken}, 401, "Admin token required"},
		{"wrong token", []string{"Authorization", "Bearer nope"}, 401, "Invalid admin token"},
		{"mock token header is not admin", []string{"serviceauthtoken", servertest.AdminToken}, 401, "Admin token required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servertest.WantError(t, h.Get("/admin/v1/mocks", tc.header...), tc.status, tc.msg)
		})
	}
	// Authentication comes before routing: unknown routes reveal nothing.
	servertest.WantError(t, h.Get("/admin/v1/anything"), 401, "Admin token required")
	if r := h.Get("/admin/v1/mocks", "Authorization", "bearer "+servertest.AdminToken); r.Status != 200 {
		t.Errorf("lower-case scheme: %d", r.Status)
	}
}

func TestAdminRoutes(t *testing.T) {
	h := servertest.New(t)
	auth := []string{"Authorization", "Bearer " + servertest.AdminToken}
	m := h.Create(`[]`, client.CreateOptions{})
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodPut, "/admin/v1/mocks", 405, "GET, POST"},
		{http.MethodPost, "/admin/v1/mocks/" + m.ID, 405, "GET, PATCH, DELETE"},
		{http.MethodPost, "/admin/v1/mocks/" + m.ID + "/data", 405, "GET, PUT"},
		{http.MethodGet, "/admin/v1/mocks/" + m.ID + "/token", 405, "POST"},
		{http.MethodDelete, "/admin/v1/mocks/" + m.ID + "/usage", 405, "GET"},
		{http.MethodGet, "/admin/v1/mocks/" + m.ID + "/other", 404, ""},
		{http.MethodGet, "/admin/v1/users", 404, ""},
		{http.MethodGet, "/admin/v1/mocks/not-a-uuid", 404, ""},
	} {
		r := h.Do(tc.method, tc.path, auth...)
		if r.Status != tc.status || r.Header.Get("Allow") != tc.allow || !json.Valid([]byte(r.Body)) {
			t.Errorf("%s %s: %d Allow %q %s", tc.method, tc.path, r.Status, r.Header.Get("Allow"), r.Body)
		}
	}
}

func TestAdminCreate(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`[{"a":1}]`, client.CreateOptions{
		ID: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE", Name: "users", Status: 202, DelayMS: 5,
		RateLimit: servertest.Ptr(int64(7)), MonthlyQuota: servertest.Ptr(int64(0)),
	})
	if m.ID != "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" || m.Name != "users" || m.Status != 202 || m.DelayMS != 5 ||
		*m.RateLimit != 7 || *m.MonthlyQuota != 0 || m.Size != 9 || m.Private || m.Token != "" ||
		m.URL != h.URL+"/mock/"+m.ID || m.ContentType != "application/json" {
		t.Errorf("created %+v", m)
	}
	_, err := h.Admin.CreateMock(ctx, strings.NewReader(`[]`), client.CreateOptions{ID: m.ID})
	wantClientError(t, err, 409, "A mock with id "+m.ID+" already exists")

	for _, tc := range []struct {
		name, data string
		opts       client.CreateOptions
		status     int
		msg        string
	}{
		{"invalid JSON with its position", "[1,\n 2,]", client.CreateOptions{}, 400, "Invalid JSON: line 2, column 4: unexpected ']', expected a value"},
		{"empty JSON", "", client.CreateOptions{}, 400, "Invalid JSON: line 1, column 1: unexpected end of input, expected a value"},
		{"+json types are JSON", "{", client.CreateOptions{ContentType: "application/problem+json"}, 400, "Invalid JSON: line 1, column 2: unexpected end of input, expected a string key"},
		{"nested too deeply", strings.Repeat("[", 513) + strings.Repeat("]", 513), client.CreateOptions{}, 400,
			"JSON nested too deeply: Decoy accepts at most 512 levels of arrays and objects (line 1, column 513)"},
		{"bad status", "[]", client.CreateOptions{Status: 99}, 400, "status must be an HTTP status from 200 to 599"},
		{"bad delay", "[]", client.CreateOptions{DelayMS: 30001}, 400, "delay_ms must be from 0 to 30000"},
		{"bad limit", "[]", client.CreateOptions{RateLimit: servertest.Ptr(int64(-1))}, 400, "rate_limit must be an integer from 0 to 1000000 (0: unlimited)"},
		{"limit too large", "[]", client.CreateOptions{RateLimit: servertest.Ptr(int64(1_000_001))}, 400, "rate_limit must be an integer from 0 to 1000000 (0: unlimited)"},
		{"bad quota", "[]", client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(-1))}, 400, "monthly_quota must be an integer of 0 or more (0: unlimited)"},
		{"bad id", "[]", client.CreateOptions{ID: "123"}, 400, "id must be a UUID"},
		{"too large", strings.Repeat(" ", 1<<20+1), client.CreateOptions{ContentType: "text/plain"}, 413, "Mock data larger than 1048576 bytes (--max-data-bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Admin.CreateMock(ctx, strings.NewReader(tc.data), tc.opts)
			wantClientError(t, err, tc.status, tc.msg)
		})
	}
	r := h.Do(http.MethodPost, "/admin/v1/mocks?nmae=x", "Authorization", "Bearer "+servertest.AdminToken)
	servertest.WantError(t, r, 400, "Unknown parameter: nmae")
	// A body of unknown length over the cap is refused while it is read.
	req, _ := http.NewRequest(http.MethodPost, h.URL+"/admin/v1/mocks", &endless{})
	req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		if resp.StatusCode != 413 {
			t.Errorf("endless upload: %d", resp.StatusCode)
		}
		resp.Body.Close()
	}
}

// endless is a request body that never ends.
type endless struct{}

func (*endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestAdminLifecycle(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`[{"v":1}]`, client.CreateOptions{Name: "life"})
	p := "/mock/" + m.ID

	// Replacing the data is seen by the next read.
	if _, err := h.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`[{"v":2},{"v":3}]`), ""); err != nil {
		t.Fatal(err)
	}
	if r := h.Get(p + "?order_by=v&order_direction=desc"); r.Body != `[{"v":3},{"v":2}]` {
		t.Errorf("after PUT: %s", r.Body)
	}
	ct, data, err := h.Admin.Data(ctx, m.ID)
	if err != nil || ct != "application/json" || string(data) != `[{"v":2},{"v":3}]` {
		t.Errorf("data = %q %q %v", ct, data, err)
	}
	_, err = h.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`[`), "")
	wantClientError(t, err, 400, "Invalid JSON: line 1, column 2: unexpected end of input, expected a value")
	if r := h.Get(p); r.Body != `[{"v":2},{"v":3}]` {
		t.Errorf("a refused PUT changed the data: %s", r.Body)
	}

	// Turning private on issues a token, shown once.
	pm, err := h.Admin.UpdateMock(ctx, m.ID, map[string]any{"private": true, "name": "secret"})
	if err != nil || !pm.Private || pm.Token == "" || pm.Name != "secret" {
		t.Fatalf("patch private: %+v %v", pm, err)
	}
	servertest.WantError(t, h.Get(p), 401, "Auth token not found")
	if got, _ := h.Admin.GetMock(ctx, m.ID); got.Token != "" {
		t.Error("GET shows the token")
	}
	again, _ := h.Admin.UpdateMock(ctx, m.ID, map[string]any{"private": true})
	if again.Token != "" {
		t.Error("patching private=true on a private mock issued another token")
	}
	if r := h.Get(p, "serviceauthtoken", pm.Token); r.Status != 200 {
		t.Errorf("token from PATCH: %d", r.Status)
	}

	// Rotation: the old token stops working at once.
	rm, err := h.Admin.RotateToken(ctx, m.ID)
	if err != nil || rm.Token == "" || rm.Token == pm.Token {
		t.Fatalf("rotate: %+v %v", rm, err)
	}
	servertest.WantError(t, h.Get(p, "serviceauthtoken", pm.Token), 401, "Invalid auth token")
	if r := h.Get(p, "serviceauthtoken", rm.Token); r.Status != 200 {
		t.Errorf("new token: %d", r.Status)
	}

	// Settings: limits, status, delay; null returns to the default.
	sm, err := h.Admin.UpdateMock(ctx, m.ID, map[string]any{"rate_limit": 1, "monthly_quota": 5, "status": 203, "delay_ms": 0})
	if err != nil || *sm.RateLimit != 1 || *sm.MonthlyQuota != 5 || sm.Status != 203 {
		t.Fatalf("patch limits: %+v %v", sm, err)
	}
	h.Clock.Add(time.Minute) // let the earlier reads leave the window
	if r := h.Get(p, "serviceauthtoken", rm.Token); r.Status != 203 || r.Header.Get("X-RateLimit-Limit") != "1" {
		t.Errorf("after patch: %d %v", r.Status, r.Header)
	}
	sm, _ = h.Admin.UpdateMock(ctx, m.ID, map[string]any{"rate_limit": nil, "monthly_quota": nil})
	if sm.RateLimit != nil || sm.MonthlyQuota != nil {
		t.Errorf("null limits kept: %+v", sm)
	}
	for _, tc := range []struct {
		fields map[string]any
		msg    string
	}{
		{map[string]any{"colour": "red"}, "Unknown field: colour"},
		{map[string]any{"private": "yes"}, "private must be true or false"},
		{map[string]any{"status": 600}, "status must be an HTTP status from 200 to 599"},
		{map[string]any{"delay_ms": -1}, "delay_ms must be from 0 to 30000"},
		{map[string]any{"monthly_quota": -3}, "monthly_quota must be null (server default) or an integer of 0 or more (0: unlimited)"},
		{map[string]any{"rate_limit": 1_000_001}, "rate_limit must be null (server default) or an integer from 0 to 1000000 (0: unlimited)"},
		{map[string]any{"rate_limit": -1}, "rate_limit must be null (server default) or an integer from 0 to 1000000 (0: unlimited)"},
		{map[string]any{"name": strings.Repeat("n", 201)}, "name must be valid UTF-8 of at most 200 bytes"},
		{map[string]any{"name": nil}, "name must be a string"},
	} {
		_, err := h.Admin.UpdateMock(ctx, m.ID, tc.fields)
		wantClientError(t, err, 400, tc.msg)
	}

	// Turning private off drops the token; rotating an open mock is refused.
	om, _ := h.Admin.UpdateMock(ctx, m.ID, map[string]any{"private": false})
	if om.Private || om.Token != "" {
		t.Errorf("private off: %+v", om)
	}
	if r := h.Get(p); r.Status != 203 {
		t.Errorf("open again: %d", r.Status)
	}
	_, err = h.Admin.RotateToken(ctx, m.ID)
	wantClientError(t, err, 409, "Mock api is not private; set private to true to issue a token")

	// Delete: gone everywhere.
	if err := h.Admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	servertest.WantError(t, h.Get(p), 404, "Mock api not found")
	_, err = h.Admin.GetMock(ctx, m.ID)
	wantClientError(t, err, 404, "Mock api not found")
	wantClientError(t, h.Admin.DeleteMock(ctx, m.ID), 404, "Mock api not found")
}

func TestAdminList(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, h.Create(`[]`, client.CreateOptions{}).ID)
	}
	var got []string
	cursor := ""
	for {
		page, next, err := h.Admin.ListMocks(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			got = append(got, m.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Errorf("listed %v, want %v", got, ids)
	}
	r := h.Get("/admin/v1/mocks?limit=5", "Authorization", "Bearer "+servertest.AdminToken)
	if !strings.Contains(r.Body, `"next_cursor":null`) {
		t.Errorf("last page: %s", r.Body)
	}
	_, _, err := h.Admin.ListMocks(ctx, "zzz", 2)
	wantClientError(t, err, 400, "Invalid cursor")
	_, _, err = h.Admin.ListMocks(ctx, "", 1001)
	wantClientError(t, err, 400, "limit must be an integer from 1 to 1000")
}

func TestUsage(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(10)), MonthlyQuota: servertest.Ptr(int64(20))})
	for i := 0; i < 3; i++ {
		h.Get("/mock/" + m.ID)
	}
	h.Get("/mock/" + m.ID + "?limit=-1") // 400: counts in the minute, not in the month
	u, err := h.Admin.Usage(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Minute.Used != 4 || u.Minute.Limit != 10 || u.Month.Used != 3 || u.Month.Limit != 20 ||
		u.Month.ResetsAt.Format("2006-01-02T15:04:05Z07:00") != "2026-12-01T00:00:00Z" {
		t.Errorf("usage = %+v", u)
	}
}

// Bodies that are not UTF-8 are refused where JSON is expected, and an
// oversized PATCH is a 413.
func TestAdminRefusesBadBodies(t *testing.T) {
	h := servertest.New(t)
	send := func(method, path, ct, body string) servertest.Response {
		req, _ := http.NewRequest(method, h.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
	}
	servertest.WantError(t, send("POST", "/admin/v1/mocks", "application/json", "{\"a\":\"\xff\xfe\"}"), 400, "Invalid JSON: not valid UTF-8 (byte 0xFF at line 1, column 7)")
	m := h.Create(`[]`, client.CreateOptions{})
	servertest.WantError(t, send("PATCH", "/admin/v1/mocks/"+m.ID, "application/json", "{\"name\":\"\xff\"}"), 400, "The body must be UTF-8: byte 0xFF at line 1, column 10 is not")
	servertest.WantError(t, send("PATCH", "/admin/v1/mocks/"+m.ID, "application/json", `{"name":"`+strings.Repeat("a", 100<<10)+`"}`), 413, "The body of a PATCH is at most 65536 bytes")
	// Text is stored as sent, whatever its bytes.
	if r := send("POST", "/admin/v1/mocks", "text/plain", "\xff"); r.Status != 201 {
		t.Errorf("text upload: %d %s", r.Status, r.Body)
	}
}
