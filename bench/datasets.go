//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/decoy-mock/decoy/internal/dataset"
)

// size is a dataset size in records.
type size struct {
	N     int    `json:"records"`
	Label string `json:"label"`
}

// parseSize reads 1k, 10k, 100k, 1m (any letter case) or a plain number.
func parseSize(s string) (size, error) {
	mult := 1
	num := strings.ToLower(s)
	switch {
	case strings.HasSuffix(num, "k"):
		mult, num = 1_000, strings.TrimSuffix(num, "k")
	case strings.HasSuffix(num, "m"):
		mult, num = 1_000_000, strings.TrimSuffix(num, "m")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return size{}, fmt.Errorf("-sizes: %q is not a record count (1k, 10k, 100k, 1m or a number)", s)
	}
	return size{N: n * mult, Label: sizeLabel(n * mult)}, nil
}

func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// query is one of the benchmark's questions; every server asks it in its own
// query language (see target in servers.go). A plain query is asked by a
// client that sends no Accept-Encoding; its variants ask the same question
// as another client does (Base is the plain query, Client the client).
type query struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Base   string `json:"base,omitempty"`
	Client string `json:"client,omitempty"`
}

var queries = []query{
	{ID: "whole", Title: "whole document"},
	{ID: "city", Title: "address.city = Paris"},
	{ID: "status-age", Title: "status $eqi active, order_by age desc, limit 10"},
	{ID: "created", Title: "order_by createdAt, limit 100"},
}

// client is how a request is sent: the headers that browsers, Node's fetch
// and axios send change what a server has to do (compress, check a token).
type client struct {
	ID    string
	Title string
	Gzip  bool // Accept-Encoding: gzip, deflate, br
	Token bool // a private mock, its token in the decoyauthtoken header
}

// browserAcceptEncoding is what browsers, Node's fetch and axios send.
const browserAcceptEncoding = "gzip, deflate, br"

// tokenHeader is the header Decoy reads a private mock's token from.
const tokenHeader = "decoyauthtoken"

var clients = []client{
	{ID: "plain", Title: "no Accept-Encoding"},
	{ID: "gzip", Title: "Accept-Encoding: gzip", Gzip: true},
	{ID: "private", Title: "private mock, token header, Accept-Encoding: gzip", Gzip: true, Token: true},
}

func clientByID(id string) (client, bool) {
	if id == "" {
		id = "plain"
	}
	for _, c := range clients {
		if c.ID == id {
			return c, true
		}
	}
	return client{}, false
}

// headers are the request headers the client adds, in order.
func (c client) headers(token string) [][2]string {
	var h [][2]string
	if c.Gzip {
		h = append(h, [2]string{"Accept-Encoding", browserAcceptEncoding})
	}
	if c.Token {
		h = append(h, [2]string{tokenHeader, token})
	}
	return h
}

// headerLines spells headers as lines of an HTTP/1.1 request.
func headerLines(h [][2]string) string {
	var b strings.Builder
	for _, kv := range h {
		b.WriteString(kv[0] + ": " + kv[1] + "\r\n")
	}
	return b.String()
}

// variant is q asked by client c.
func variant(q query, c client) query {
	if c.ID == "plain" {
		return q
	}
	return query{ID: q.ID + "." + c.ID, Title: q.Title + ", " + c.ID, Base: q.ID, Client: c.ID}
}

// base is the plain query q asks again.
func (q query) base() string {
	if q.Base == "" {
		return q.ID
	}
	return q.Base
}

func (q query) client() client {
	c, _ := clientByID(q.Client)
	return c
}

// allQueries is every query with every client of ids, client by client:
// the plain ones first, then their variants.
func allQueries(ids []string) []query {
	if len(ids) == 0 {
		ids = []string{"plain"}
	}
	var qs []query
	for _, id := range ids {
		c, ok := clientByID(id)
		if !ok {
			continue
		}
		for _, q := range queries {
			qs = append(qs, variant(q, c))
		}
	}
	return qs
}

// dataFiles is one size's users document, written in the shape each server
// loads. The records come from internal/dataset, the generator the read-path
// benchmarks use, which has every field the queries need (address.city,
// address.geo, status in two letter cases, age, createdAt as YYYY-MM-DD, tags).
type dataFiles struct {
	size    size
	dir     string
	users   string // the JSON array, as Decoy stores it
	db      string // json-server's {"users": [...]}
	mockoon string // Mockoon environment with the array in a data bucket
	bytes   int64
	mockID  string // Decoy's mock id, the same on every run
	// privateID is the id of the same document stored as a private mock.
	privateID string
}

// writeDataFiles generates the document once and writes the files that the
// selected servers read.
func writeDataFiles(dir string, sz size, servers []string) (*dataFiles, error) {
	d := &dataFiles{
		size:      sz,
		dir:       dir,
		users:     filepath.Join(dir, "users.json"),
		db:        filepath.Join(dir, "db.json"),
		mockoon:   filepath.Join(dir, "mockoon.json"),
		mockID:    benchID("users-" + sz.Label),
		privateID: benchID("users-" + sz.Label + "-private"),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	doc := dataset.Users(sz.N)
	d.bytes = int64(len(doc))
	if err := os.WriteFile(d.users, doc, 0o644); err != nil {
		return nil, err
	}
	if slices.Contains(servers, "json-server") {
		db := make([]byte, 0, len(doc)+16)
		db = append(append(append(db, `{"users":`...), doc...), "}\n"...)
		if err := os.WriteFile(d.db, db, 0o644); err != nil {
			return nil, err
		}
	}
	if slices.Contains(servers, "mockoon") {
		env, err := mockoonEnvironment(doc)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(d.mockoon, env, 0o644); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// benchID is a mock id that is the same on every run.
func benchID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://decoy.invalid/bench/"+name)).String()
}

// splitRecords cuts a JSON array into arrays of per records each (the last
// may hold fewer), each record's bytes unchanged.
func splitRecords(doc []byte, per int) ([][]byte, error) {
	if per < 1 {
		return nil, fmt.Errorf("records per document must be positive, not %d", per)
	}
	var recs []json.RawMessage
	if err := json.Unmarshal(doc, &recs); err != nil {
		return nil, err
	}
	var docs [][]byte
	for i := 0; i < len(recs); i += per {
		b := []byte{'['}
		for j, r := range recs[i:min(i+per, len(recs))] {
			if j > 0 {
				b = append(b, ',', '\n')
			}
			b = append(b, r...)
		}
		docs = append(docs, append(b, ']'))
	}
	return docs, nil
}

// mockoonEnvironment is a Mockoon environment with one data bucket holding
// the users array and one CRUD route, /users, over it: Mockoon's CRUD GET is
// what filters (path_eq, path_like), sorts (sort, order) and pages (limit,
// page). The fields follow the defaults of @mockoon/commons; lastMigration 33
// is the newest migration of @mockoon/cli 9, and --repair covers an older one.
func mockoonEnvironment(doc []byte) ([]byte, error) {
	const routeID, responseID, bucketUUID, bucketID = "b0000000-0000-4000-8000-000000000001",
		"b0000000-0000-4000-8000-000000000002", "b0000000-0000-4000-8000-000000000003", "usrs"
	type obj = map[string]any
	env := obj{
		"uuid":              "b0000000-0000-4000-8000-000000000000",
		"lastMigration":     33,
		"name":              "decoy-bench",
		"endpointPrefix":    "",
		"latency":           0,
		"port":              3000,
		"hostname":          "127.0.0.1",
		"folders":           []any{},
		"rootChildren":      []any{obj{"type": "route", "uuid": routeID}},
		"proxyMode":         false,
		"proxyHost":         "",
		"proxyRemovePrefix": false,
		"tlsOptions": obj{"enabled": false, "type": "CERT", "pfxPath": "", "certPath": "",
			"keyPath": "", "caPath": "", "passphrase": ""},
		"cors":            true,
		"headers":         []any{obj{"key": "Content-Type", "value": "application/json"}},
		"proxyReqHeaders": []any{},
		"proxyResHeaders": []any{},
		"callbacks":       []any{},
		"data": []any{obj{"uuid": bucketUUID, "id": bucketID, "name": "users",
			"documentation": "", "value": string(doc)}},
		"routes": []any{obj{
			"uuid": routeID, "type": "crud", "documentation": "", "method": "", "endpoint": "users",
			"responseMode": nil, "streamingMode": nil, "streamingInterval": 0,
			"responses": []any{obj{
				"uuid": responseID, "body": "{}", "latency": 0, "statusCode": 200, "label": "",
				"headers": []any{}, "bodyType": "DATABUCKET", "filePath": "", "databucketID": bucketID,
				"sendFileAsBody": false, "rules": []any{}, "rulesOperator": "OR",
				"disableTemplating": false, "fallbackTo404": false, "default": true,
				"crudKey": "id", "callbacks": []any{},
			}},
		}},
	}
	return json.Marshal(env)
}
