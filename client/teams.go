package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// The teams part of the admin API (§6) is called through Do: its answers
// are JSON objects the CLI prints as they come.

// Do sends a JSON request (in, when not nil, is the body) to path, which
// starts with /admin/v1, and decodes the JSON answer into out (when not
// nil).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body *bytes.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	if body == nil {
		return c.do(ctx, method, path, ct, http.NoBody, out)
	}
	return c.do(ctx, method, path, ct, body, out)
}

// MockQuery narrows a listing of mocks (§6.3); empty fields do not narrow.
type MockQuery struct {
	WorkspaceID string
	ProjectID   string
	// Q searches names and ids.
	Q string
}

// SearchMocks returns a page of the mocks q selects among those the caller
// sees, and the cursor of the next page ("" at the end).
func (c *Client) SearchMocks(ctx context.Context, q MockQuery, cursor string, limit int) ([]Mock, string, error) {
	v := url.Values{}
	for k, s := range map[string]string{"workspace_id": q.WorkspaceID, "project_id": q.ProjectID, "q": q.Q, "cursor": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var page struct {
		Mocks      []Mock  `json:"mocks"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := c.do(ctx, http.MethodGet, "/admin/v1/mocks?"+v.Encode(), "", nil, &page); err != nil {
		return nil, "", err
	}
	next := ""
	if page.NextCursor != nil {
		next = *page.NextCursor
	}
	return page.Mocks, next, nil
}
