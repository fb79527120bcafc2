package main_test

// The container image: decoy healthcheck (its HEALTHCHECK), what the
// Dockerfile, docker-compose.yml (one node) and docker-compose.replicas.yml
// must keep, read as text, and, where a Docker daemon answers, the image
// built and run.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
)

// decoy healthcheck asks the server of DECOY_ADDR (and DECOY_TLS_CERT) for
// /healthz, over HTTP or HTTPS, and fails when nothing answers.
func TestHealthcheck(t *testing.T) {
	run := func(env ...string) (string, int) {
		cmd := exec.Command(binary, "healthcheck")
		cmd.Env = append(cleanEnv(), env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	plain := start(t, t.TempDir())
	if out, code := run("DECOY_ADDR=" + strings.TrimPrefix(plain.url, "http://")); code != 0 || !strings.Contains(out, "healthy") {
		t.Errorf("healthcheck of %s: exit %d, %q", plain.url, code, out)
	}

	_, certFile, keyFile := writePair(t, t.TempDir(), 1)
	secure := start(t, t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile)
	addr := strings.TrimPrefix(secure.url, "https://")
	if out, code := run("DECOY_ADDR="+addr, "DECOY_TLS_CERT="+certFile); code != 0 {
		t.Errorf("healthcheck of %s: exit %d, %q", secure.url, code, out)
	}
	if out, code := run("DECOY_ADDR=" + addr); code == 0 {
		t.Errorf("healthcheck over HTTP of %s: exit 0, %q", secure.url, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if out, code := run("DECOY_ADDR=" + closed); code != 1 || !strings.Contains(out, "unhealthy") {
		t.Errorf("healthcheck of nothing: exit %d, %q", code, out)
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

// dockerfileStages reads the Dockerfile's instructions, by stage.
func dockerfileStages(t *testing.T) [][]instruction {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var line string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || text == "" && line == "" {
			continue
		}
		if more, ok := strings.CutSuffix(text, `\`); ok {
			line += more + " "
			continue
		}
		line += text
		cmd, args, _ := strings.Cut(line, " ")
		line = ""
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile: %s before FROM", in.cmd)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	return stages
}

// The image runs as a user other than root, keeps its data in a volume that
// user owns, listens beyond the container's loopback, checks its health
// without tools the base image lacks, and holds a pure-Go binary.
func TestDockerfile(t *testing.T) {
	stages := dockerfileStages(t)
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	build, image := slices.Concat(stages[:len(stages)-1]...), stages[len(stages)-1]
	all := func(stage []instruction, cmd string) []string {
		var args []string
		for _, in := range stage {
			if in.cmd == cmd {
				args = append(args, in.args)
			}
		}
		return args
	}
	if !slices.ContainsFunc(all(build, "RUN"), func(s string) bool { return strings.Contains(s, "CGO_ENABLED=0 go build") }) {
		t.Error("the binary is not built with CGO_ENABLED=0")
	}

	users := all(image, "USER")
	if len(users) == 0 {
		t.Fatal("the image sets no USER: it would run as root")
	}
	user := users[len(users)-1]
	if name, _, _ := strings.Cut(user, ":"); name == "root" || name == "0" {
		t.Errorf("USER %s is root", user)
	}

	env := map[string]string{}
	for _, args := range all(image, "ENV") {
		for _, kv := range strings.Fields(args) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	dataDir := env["DECOY_DATA_DIR"]
	var volumes []string
	for _, args := range all(image, "VOLUME") {
		volumes = append(volumes, strings.Fields(strings.Trim(args, `[]`))...)
	}
	for i, v := range volumes {
		volumes[i] = strings.Trim(v, `",`)
	}
	if dataDir == "" || !slices.Contains(volumes, dataDir) {
		t.Errorf("DECOY_DATA_DIR %q is not a VOLUME (%q)", dataDir, volumes)
	}
	owned := regexp.MustCompile(`^--from=\S+ --chown=` + regexp.QuoteMeta(user) + ` \S+ ` + regexp.QuoteMeta(dataDir) + `$`)
	if !slices.ContainsFunc(all(image, "COPY"), owned.MatchString) {
		t.Errorf("no COPY --chown=%s gives %s to the user the server runs as", user, dataDir)
	}
	if host, _, err := net.SplitHostPort(env["DECOY_ADDR"]); err != nil || host != "0.0.0.0" {
		t.Errorf("DECOY_ADDR=%q: the server must listen on every address of the container", env["DECOY_ADDR"])
	}

	checks := all(image, "HEALTHCHECK")
	if len(checks) != 1 {
		t.Fatalf("%d HEALTHCHECK instructions, want 1", len(checks))
	}
	_, exe, ok := strings.Cut(checks[0], "CMD ")
	var argv []string
	if !ok || json.Unmarshal([]byte(exe), &argv) != nil || !slices.Equal(argv, []string{"/decoy", "healthcheck"}) {
		t.Errorf("HEALTHCHECK %s: want CMD [\"/decoy\", \"healthcheck\"] (the base image has no shell or curl)", checks[0])
	}
	if eps := all(image, "ENTRYPOINT"); len(eps) != 1 || eps[0] != `["/decoy"]` {
		t.Errorf("ENTRYPOINT %q, want [\"/decoy\"]", eps)
	}

	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**/decoy-data", "**/node_modules", ".git"} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), want) {
			t.Errorf(".dockerignore does not list %s", want)
		}
	}
}

// yamlBlock returns the lines nested under the key at path in a YAML file
// indented with spaces, following an alias (key: *name) to its anchor. It
// reads the plain block style the compose files are written in, no more.
func yamlBlock(lines []string, path ...string) ([]string, bool) {
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	block := lines
	for _, key := range path {
		found := false
		min := -1
		for _, l := range block {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && (min < 0 || indent(l) < min) {
				min = indent(l)
			}
		}
		if min < 0 {
			return nil, false
		}
		for i, l := range block {
			rest, ok := strings.CutPrefix(l, strings.Repeat(" ", min)+key+":")
			if !ok || indent(l) != min {
				continue
			}
			var sub []string
			for _, m := range block[i+1:] {
				if t := strings.TrimSpace(m); t != "" && !strings.HasPrefix(t, "#") && indent(m) <= min {
					break
				}
				sub = append(sub, m)
			}
			if alias, ok := strings.CutPrefix(strings.TrimSpace(rest), "*"); ok {
				for j, a := range lines {
					if strings.HasSuffix(strings.TrimSpace(a), "&"+alias) {
						sub, _ = yamlBlock(lines[j:], strings.TrimSpace(strings.SplitN(a, ":", 2)[0]))
					}
				}
			}
			block, found = sub, true
			break
		}
		if !found {
			return nil, false
		}
	}
	return block, true
}

// docker-compose.yml, the file docker compose up reads, runs one node:
// one Decoy service and nothing else, its data in a volume at /data, on
// port 8080; its first lines say where the replicas' setup is.
func TestComposeSingleNode(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	services, ok := yamlBlock(lines, "services")
	if !ok {
		t.Fatal("docker-compose.yml has no services")
	}
	var names []string
	for _, l := range services {
		if name, ok := strings.CutSuffix(l, ":"); ok && strings.TrimSpace(name) != "" && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	if !slices.Equal(names, []string{"decoy"}) {
		t.Errorf("docker-compose.yml runs %v, want only decoy", names)
	}
	for _, want := range []struct {
		path []string
		line string
	}{
		{[]string{"services", "decoy", "volumes"}, "- decoy-data:/data"},
		{[]string{"services", "decoy", "ports"}, `- "8080:8080"`},
		{[]string{"services", "decoy", "build"}, ""},
	} {
		block, ok := yamlBlock(lines, want.path...)
		if !ok || (want.line != "" && !slices.ContainsFunc(block, func(l string) bool { return strings.TrimSpace(l) == want.line })) {
			t.Errorf("docker-compose.yml: %s lacks %q", strings.Join(want.path, "."), want.line)
		}
	}
	if !strings.Contains(strings.Join(lines[:5], "\n"), "docker-compose.replicas.yml") {
		t.Errorf("docker-compose.yml's first lines do not point to docker-compose.replicas.yml:\n%s", strings.Join(lines[:5], "\n"))
	}
}

// In docker-compose.replicas.yml, nginx starts once every replica answers:
// each replica has a health check, and nginx waits for it to pass.
func TestComposeWaitsForHealthyReplicas(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.replicas.yml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	deps, ok := yamlBlock(lines, "services", "lb", "depends_on")
	if !ok {
		t.Fatal("services.lb has no depends_on")
	}
	for _, replica := range []string{"decoy-1", "decoy-2", "decoy-3"} {
		dep, _ := yamlBlock(deps, replica)
		if !slices.ContainsFunc(dep, func(l string) bool { return strings.TrimSpace(l) == "condition: service_healthy" }) {
			t.Errorf("lb does not wait for %s with condition: service_healthy", replica)
		}
		check, _ := yamlBlock(lines, "services", replica, "healthcheck")
		if !slices.ContainsFunc(check, func(l string) bool { return strings.Contains(l, `["CMD", "/decoy", "healthcheck"]`) }) {
			t.Errorf("%s has no healthcheck running /decoy healthcheck: %q", replica, check)
		}
	}
}

// The image, built and run where a Docker daemon answers: it becomes
// healthy, runs as a user other than root, serves on its published port,
// and keeps what it is given in its volume from one container to the next.
func TestDockerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		testservice.Skip(t, "Docker", "no docker command: install Docker to build and run the image")
	}
	if out, err := exec.Command(docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		testservice.Skip(t, "Docker", "no Docker daemon answers ("+first+"): start one to build and run the image")
	}
	// A first build pulls images and modules: it gets what go test's
	// -timeout leaves, ending early enough to say what it was doing.
	deadline := time.Now().Add(20 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	dockerDo := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, docker, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tag := "decoy-test:" + randomHex(6)
	dockerDo("build", "-t", tag, "../..")
	t.Cleanup(func() { exec.Command(docker, "rmi", "-f", tag).Run() })
	if user := dockerDo("image", "inspect", "--format", "{{.Config.User}}", tag); user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("the image runs as %q", user)
	}
	volume := "decoy-test-" + randomHex(6)
	t.Cleanup(func() { exec.Command(docker, "volume", "rm", "-f", volume).Run() })

	// run starts a container on the volume and returns its URL once Docker
	// reports it healthy.
	run := func() (id, url string) {
		t.Helper()
		id = dockerDo("run", "-d", "-P", "-v", volume+":/data", "-e", "DECOY_ADMIN_TOKEN="+adminToken, tag)
		t.Cleanup(func() { exec.Command(docker, "rm", "-f", id).Run() })
		for giveUp := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
			status := dockerDo("inspect", "--format", "{{.State.Health.Status}}", id)
			if status == "healthy" {
				break
			}
			if status == "unhealthy" || time.Now().After(giveUp) {
				logs, _ := exec.Command(docker, "logs", id).CombinedOutput()
				t.Fatalf("container %s is %s:\n%s", id, status, logs)
			}
		}
		hostPort, _, _ := strings.Cut(dockerDo("port", id, "8080/tcp"), "\n")
		_, port, err := net.SplitHostPort(hostPort)
		if err != nil {
			t.Fatalf("docker port: %q", hostPort)
		}
		return id, "http://127.0.0.1:" + port
	}

	id, url := run()
	if a := get(t, url+"/healthz"); a.status != 200 {
		t.Fatalf("/healthz: %d %s", a.status, a.body)
	}
	m, err := client.New(url, adminToken).CreateMock(context.Background(), strings.NewReader(`[{"kept":true}]`), client.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a mock in the container: %v", err)
	}
	dockerDo("rm", "-f", id)

	_, url = run()
	if a := get(t, url+"/mock/"+m.ID); a.status != 200 || a.body != `[{"kept":true}]` {
		t.Errorf("the mock in a new container on the same volume: %d %s", a.status, a.body)
	}
}
