package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
)

// The request journal (§13.2): a project's requests, newest first, and
// its live feed.

// RequestPage is a page of a project's journal.
type RequestPage struct {
	Requests   []*decoy.JournalEntry `json:"requests"`
	NextCursor *string               `json:"next_cursor"`
}

// requestQuery is the query string of f, and of cursor and limit when
// set.
func requestQuery(f decoy.JournalFilter, cursor string, limit int) string {
	v := url.Values{}
	for k, s := range map[string]string{"method": f.Method, "path": f.Path, "cursor": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Status != 0 {
		v.Set("status", strconv.Itoa(f.Status))
	}
	if !f.Since.IsZero() {
		v.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

func requestsPath(project string) string {
	return "/admin/v1/projects/" + url.PathEscape(project) + "/requests"
}

// Requests returns a page of a project's journal that passes f, newest
// first.
func (c *Client) Requests(ctx context.Context, project string, f decoy.JournalFilter, cursor string, limit int) (*RequestPage, error) {
	var page RequestPage
	if err := c.do(ctx, http.MethodGet, requestsPath(project)+requestQuery(f, cursor, limit), "", nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// FollowRequests calls fn with each entry of a project's journal that
// passes f (f.Since aside) as it is recorded, from now on, until ctx ends
// (nil), the feed ends (an error) or fn fails (its error). Without
// c.HTTP, the feed is not bound in time.
func (c *Client) FollowRequests(ctx context.Context, project string, f decoy.JournalFilter, fn func(*decoy.JournalEntry) error) error {
	f.Since = time.Time{}
	streaming := *c
	if streaming.HTTP == nil {
		streaming.HTTP = &http.Client{}
	}
	resp, err := streaming.send(ctx, http.MethodGet, requestsPath(project)+"/stream"+requestQuery(f, "", 0), "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	// An entry holds a body of up to 64 KiB and headers of as much,
	// escaped in JSON: at most six times that.
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "request" {
				var e decoy.JournalEntry
				if err := json.Unmarshal([]byte(data), &e); err != nil {
					return fmt.Errorf("decode an entry of the feed: %w", err)
				}
				if err := fn(&e); err != nil {
					return err
				}
			}
			event, data = "", ""
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(line[len("data:"):], " ")
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the server ended the feed")
}
