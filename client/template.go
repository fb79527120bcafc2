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
	resp, err := c.send(ctx, http.MethodPut, "/admin/v1/mocks/"+url.PathEscape(id)+"/template?mode="+url.QueryEscape(mode), contentType(ct), template)
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
