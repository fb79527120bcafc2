package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// TemplateMock is a mock as the template calls answer it: with its
// template's mode and the seed the template ran with.
type TemplateMock struct {
	Mock
	// TemplateMode is the mode of the mock's template, nil when none.
	TemplateMode *string `json:"template_mode"`
}

// SetTemplate sets the template of mock id in mode (once or always); ct is
// application/json, or application/schema+json for a JSON Schema. It
// returns the mock and the seed the template ran with.
func (c *Client) SetTemplate(ctx context.Context, id string, template io.Reader, ct, mode string) (*TemplateMock, string, error) {
	return c.SetTemplateSeed(ctx, id, template, ct, mode, "")
}

// SetTemplateSeed is SetTemplate with the seed the template runs with now
// (a decimal integer; empty: a random one), so that a template in once
// mode writes the data that seed gives.
func (c *Client) SetTemplateSeed(ctx context.Context, id string, template io.Reader, ct, mode, seed string) (*TemplateMock, string, error) {
	q := url.Values{"mode": {mode}}
	if seed != "" {
		q.Set("seed", seed)
	}
	resp, err := c.send(ctx, http.MethodPut, "/admin/v1/mocks/"+url.PathEscape(id)+"/template?"+q.Encode(), contentType(ct), template)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	var m TemplateMock
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, "", fmt.Errorf("decode PUT template answer: %w", err)
	}
	return &m, resp.Header.Get("Decoy-Seed"), nil
}
