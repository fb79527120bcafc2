package client

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/decoy-mock/decoy"
)

// ImportOptions are the settings of an import.
type ImportOptions struct {
	// Format is openapi, json-server or decoy; empty: the server guesses
	// from the content.
	Format string
	// NewIDs gives the mocks of a Decoy export fresh ids.
	NewIDs bool
	// DryRun reports what would be created and skipped, storing nothing.
	DryRun bool
	// BasePath prefixes the path of every route the import makes ("/v1").
	BasePath string
}

// Skipped is a part of an imported file no mock was made from.
type Skipped struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// ImportResult is the answer of an import.
type ImportResult struct {
	Created []Mock `json:"created"`
	// Updated are mocks that existed, given the file's data (an import of
	// the same file again updates in place).
	Updated []Mock         `json:"updated"`
	Routes  []*decoy.Route `json:"routes"`
	Skipped []Skipped      `json:"skipped"`
}

// Import makes mocks of project from file, all of them or none.
func (c *Client) Import(ctx context.Context, project string, file io.Reader, o ImportOptions) (*ImportResult, error) {
	q := url.Values{}
	if o.Format != "" {
		q.Set("format", o.Format)
	}
	if o.NewIDs {
		q.Set("new_ids", "true")
	}
	if o.DryRun {
		q.Set("dry_run", "true")
	}
	if o.BasePath != "" {
		q.Set("base_path", o.BasePath)
	}
	path := "/admin/v1/projects/" + url.PathEscape(project) + "/import"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out ImportResult
	if err := c.do(ctx, http.MethodPost, path, "application/octet-stream", file, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Export returns the export of project, a .tar.gz, for the caller to read
// and close.
func (c *Client) Export(ctx context.Context, project string) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodGet, "/admin/v1/projects/"+url.PathEscape(project)+"/export", "", nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
