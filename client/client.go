// Package client calls Decoy's admin API. The decoy CLI is built on it, and
// end-to-end tests use it to drive a real server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
)

// Client is an admin API client.
type Client struct {
	// BaseURL is the server's address, such as http://127.0.0.1:8080.
	BaseURL string
	// AdminToken is sent as the bearer token.
	AdminToken string
	// HTTP is the client used; nil means a client with a 5-minute timeout.
	HTTP *http.Client
}

// New returns a client for the server at baseURL.
func New(baseURL, adminToken string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), AdminToken: adminToken}
}

// Mock is a mock as the admin API returns it.
type Mock struct {
	decoy.Mock
	URL string `json:"url"`
	// Token is set only in the answer that creates or rotates it.
	Token string `json:"token,omitempty"`
	// TemplateMode is the mode of the mock's template ("once" or
	// "always"), nil when it has none.
	TemplateMode *string `json:"template_mode,omitempty"`
}

// Error is an error answer of the server.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// CreateOptions are the settings of a new mock.
type CreateOptions struct {
	ID           string
	Name         string
	Private      bool
	ContentType  string // default application/json
	Status       int    // default 200
	DelayMS      int
	RateLimit    *int64 // nil: the server default
	MonthlyQuota *int64 // nil: the server default
	// ProjectID is the project to create the mock in; required when the
	// caller reaches more than one (§6).
	ProjectID string
}

// CreateMock stores data as a new mock.
func (c *Client) CreateMock(ctx context.Context, data io.Reader, o CreateOptions) (*Mock, error) {
	q := url.Values{}
	if o.ID != "" {
		q.Set("id", o.ID)
	}
	if o.Name != "" {
		q.Set("name", o.Name)
	}
	if o.Private {
		q.Set("private", "true")
	}
	if o.Status != 0 {
		q.Set("status", strconv.Itoa(o.Status))
	}
	if o.DelayMS != 0 {
		q.Set("delay_ms", strconv.Itoa(o.DelayMS))
	}
	if o.RateLimit != nil {
		q.Set("rate_limit", strconv.FormatInt(*o.RateLimit, 10))
	}
	if o.MonthlyQuota != nil {
		q.Set("monthly_quota", strconv.FormatInt(*o.MonthlyQuota, 10))
	}
	if o.ProjectID != "" {
		q.Set("project_id", o.ProjectID)
	}
	var m Mock
	err := c.do(ctx, http.MethodPost, "/admin/v1/mocks?"+q.Encode(), contentType(o.ContentType), data, &m)
	return &m, err
}

// ListMocks returns a page of mocks and the cursor of the next ("" at the
// end). limit 0 uses the server's default page size.
func (c *Client) ListMocks(ctx context.Context, cursor string, limit int) ([]Mock, string, error) {
	return c.SearchMocks(ctx, MockQuery{}, cursor, limit)
}

// GetMock returns a mock's settings.
func (c *Client) GetMock(ctx context.Context, id string) (*Mock, error) {
	var m Mock
	err := c.do(ctx, http.MethodGet, "/admin/v1/mocks/"+url.PathEscape(id), "", nil, &m)
	return &m, err
}

// Data returns a mock's stored data and its content type.
func (c *Client) Data(ctx context.Context, id string) (string, []byte, error) {
	resp, err := c.send(ctx, http.MethodGet, "/admin/v1/mocks/"+url.PathEscape(id)+"/data", "", nil)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), data, err
}

// ReplaceData replaces a mock's data.
func (c *Client) ReplaceData(ctx context.Context, id string, data io.Reader, ct string) (*Mock, error) {
	var m Mock
	err := c.do(ctx, http.MethodPut, "/admin/v1/mocks/"+url.PathEscape(id)+"/data", contentType(ct), data, &m)
	return &m, err
}

// UpdateMock changes settings: fields may hold name, private, status,
// delay_ms, rate_limit and monthly_quota (nil: the server default).
func (c *Client) UpdateMock(ctx context.Context, id string, fields map[string]any) (*Mock, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var m Mock
	err = c.do(ctx, http.MethodPatch, "/admin/v1/mocks/"+url.PathEscape(id), "application/json", bytes.NewReader(body), &m)
	return &m, err
}

// RotateToken issues a new token for a private mock.
func (c *Client) RotateToken(ctx context.Context, id string) (*Mock, error) {
	var m Mock
	err := c.do(ctx, http.MethodPost, "/admin/v1/mocks/"+url.PathEscape(id)+"/token", "", nil, &m)
	return &m, err
}

// Usage returns a mock's use of its limits.
func (c *Client) Usage(ctx context.Context, id string) (*decoy.Usage, error) {
	var u decoy.Usage
	err := c.do(ctx, http.MethodGet, "/admin/v1/mocks/"+url.PathEscape(id)+"/usage", "", nil, &u)
	return &u, err
}

// DeleteMock deletes a mock.
func (c *Client) DeleteMock(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/admin/v1/mocks/"+url.PathEscape(id), "", nil, nil)
}

func contentType(ct string) string {
	if ct == "" {
		return "application/json"
	}
	return ct
}

// do sends a request and decodes a JSON answer into out (when not nil);
// a 204 leaves out as it is.
func (c *Client) do(ctx context.Context, method, path, ct string, body io.Reader, out any) error {
	resp, err := c.send(ctx, method, path, ct, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s answer: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns a 2xx answer; any other is an *Error.
func (c *Client) send(ctx context.Context, method, path, ct string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if c.AdminToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.AdminToken)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e struct {
		Error string `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(raw))
		if e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
	}
	return nil, &Error{Status: resp.StatusCode, Message: e.Error}
}
