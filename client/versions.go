package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/decoy-mock/decoy"
)

// Versions returns the kept versions of a mock's data, newest (the
// current data) first.
func (c *Client) Versions(ctx context.Context, id string) ([]decoy.Version, error) {
	var list struct {
		Versions []decoy.Version `json:"versions"`
	}
	err := c.do(ctx, http.MethodGet, versionsPath(id), "", nil, &list)
	return list.Versions, err
}

// VersionData returns the data of a version of a mock's data, as it was
// stored, and its content type.
func (c *Client) VersionData(ctx context.Context, id string, version int64) (string, []byte, error) {
	resp, err := c.send(ctx, http.MethodGet, versionsPath(id)+"/"+strconv.FormatInt(version, 10)+"/data", "", nil)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), data, err
}

// RestoreVersion makes the data of a version the mock's data again, as a
// new version.
func (c *Client) RestoreVersion(ctx context.Context, id string, version int64) (*Mock, error) {
	var m Mock
	err := c.do(ctx, http.MethodPost, versionsPath(id)+"/"+strconv.FormatInt(version, 10)+"/restore", "", nil, &m)
	return &m, err
}

func versionsPath(id string) string { return "/admin/v1/mocks/" + url.PathEscape(id) + "/versions" }

// ResetLive sets a mock's live data back to its current version (§12.2):
// the writes made through its routes since are dropped.
func (c *Client) ResetLive(ctx context.Context, id string) (*Mock, error) {
	var m Mock
	err := c.do(ctx, http.MethodPost, "/admin/v1/mocks/"+url.PathEscape(id)+"/reset", "", nil, &m)
	return &m, err
}

// Snapshot saves a mock's live data as a new version (§12.2), and returns
// it.
func (c *Client) Snapshot(ctx context.Context, id string) (*decoy.Version, error) {
	var v decoy.Version
	err := c.do(ctx, http.MethodPost, versionsPath(id), "", nil, &v)
	return &v, err
}
