package e2e

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.yaml.in/yaml/v3"

	"github.com/neardup/neardup/internal/cli"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// composeProject is the part of the Compose file format TestComposeFile
// models. It is decoded strictly: a key it does not know fails the test,
// which must then learn what the key means before the file may use it.
type composeProject struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

// composeService is one service. Entrypoint and command are taken in the
// list form only (the string form would need Compose's shell splitting).
type composeService struct {
	Image       string            `yaml:"image"`
	Build       composeBuild      `yaml:"build"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   dependsOn         `yaml:"depends_on"`
	Profiles    []string          `yaml:"profiles"`
	Deploy      struct {
		Replicas *int `yaml:"replicas"`
	} `yaml:"deploy"`
	StopSignal      string `yaml:"stop_signal"`
	StopGracePeriod string `yaml:"stop_grace_period"`
	// User is the user a container runs as; the processes of the test
	// run as the test's user.
	User string `yaml:"user"`
}

// composeBuild is build in either form: the context directory, or
// {context: DIR, args: {NAME: VALUE}}.
type composeBuild struct {
	Context string
	Args    map[string]string
}

// UnmarshalYAML decodes either form of build.
func (b *composeBuild) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&b.Context)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "context" && k != "args" {
			return fmt.Errorf("line %d: build.%s is not modelled", n.Line, k)
		}
	}
	var long struct {
		Context string            `yaml:"context"`
		Args    map[string]string `yaml:"args"`
	}
	if err := n.Decode(&long); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	b.Context, b.Args = long.Context, long.Args
	return nil
}

// dependsOn is depends_on in either form, a list of services or a map of
// service to {condition: ...}: the services, each with its condition.
type dependsOn map[string]string

// UnmarshalYAML decodes either form of depends_on.
func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	*d = dependsOn{}
	switch n.Kind {
	case yaml.SequenceNode:
		var names []string
		if err := n.Decode(&names); err != nil {
			return fmt.Errorf("depends_on: %w", err)
		}
		for _, s := range names {
			(*d)[s] = "service_started"
		}
	case yaml.MappingNode:
		var m map[string]map[string]string
		if err := n.Decode(&m); err != nil {
			return fmt.Errorf("depends_on: %w", err)
		}
		for s, opts := range m {
			for k := range opts {
				if k != "condition" {
					return fmt.Errorf("line %d: depends_on.%s.%s is not modelled", n.Line, s, k)
				}
			}
			(*d)[s] = opts["condition"]
		}
	default:
		return fmt.Errorf("line %d: depends_on is neither a list nor a map", n.Line)
	}
	return nil
}

// readCompose decodes the compose file name of the repository
// (docker-compose.yml, or an override file).
func readCompose(t *testing.T, name string) composeProject {
	t.Helper()
	f, err := os.Open(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := decodeCompose(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(p.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return p
}

// decodeCompose decodes a Compose file strictly.
func decodeCompose(r io.Reader) (composeProject, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var p composeProject
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("decode: %w", err)
	}
	return p, nil
}

// TestComposeModel checks what the model of the Compose file accepts: a
// key or a form it does not model is an error, not silently ignored.
func TestComposeModel(t *testing.T) {
	for _, tc := range []struct{ name, yaml, wantErr string }{
		{"depends_on list", "services: {a: {image: x, depends_on: [b]}}", ""},
		{"depends_on map", "services: {a: {image: x, depends_on: {b: {condition: service_healthy}}}}", ""},
		{"merge key", "services: {a: &a {build: ., command: [y]}, b: {<<: *a, profiles: [p]}}", ""},
		{"depends_on option", "services: {a: {image: x, depends_on: {b: {condition: service_started, restart: true}}}}", "not modelled"},
		{"unknown service key", "services: {a: {image: x, hostname: h}}", "field hostname not found"},
		{"unknown top-level key", "services: {a: {image: x}}\nnetworks: {n: {}}", "field networks not found"},
		{"string command", "services: {a: {image: x, command: run it}}", "cannot unmarshal"},
		{"long build", "services: {a: {build: {context: ., args: {A: b}}}}", ""},
		{"long build option", "services: {a: {build: {context: ., target: x}}}", "build.target is not modelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decodeCompose(strings.NewReader(tc.yaml))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("decode: %v, want error %q", err, tc.wantErr)
			}
			if tc.name == "merge key" && (p.Services["b"].Build.Context != "." || len(p.Services["b"].Profiles) != 1) {
				t.Errorf("b after the merge: %+v", p.Services["b"])
			}
		})
	}
}

// composeUp is a `docker compose [--profile P]... up [flags] [SERVICE...]`
// command of README.md or docs/*.md, with the shell lines before it in its
// block.
type composeUp struct {
	line     string
	setup    []string
	profiles []string
	targets  []string
	exitFrom string
	scale    map[string]int
}

// docComposeUps returns the `docker compose ... up` commands of README.md
// and docs/*.md.
func docComposeUps(t *testing.T) []composeUp {
	t.Helper()
	var ups []composeUp
	for _, b := range docBlocks(t, "sh") {
		lines := strings.Split(strings.TrimSpace(b), "\n")
		for i, line := range lines {
			line, _, _ = strings.Cut(line, " #")
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "docker" || f[1] != "compose" || !slices.Contains(f, "up") {
				continue
			}
			up := parseComposeUp(t, f[2:])
			up.line, up.setup = line, lines[:i]
			ups = append(ups, up)
		}
	}
	if len(ups) == 0 {
		t.Fatal("README.md and docs/*.md have no `docker compose ... up` command in a ```sh block")
	}
	return ups
}

// parseComposeUp reads the arguments after `docker compose`. A flag it
// does not know fails the test.
func parseComposeUp(t *testing.T, args []string) composeUp {
	t.Helper()
	up := composeUp{scale: map[string]int{}}
	seenUp := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if i++; i == len(args) {
				t.Fatalf("docker compose %s: %s needs a value", strings.Join(args, " "), a)
			}
			return args[i]
		}
		switch {
		case !seenUp && a == "--profile":
			up.profiles = append(up.profiles, value())
		case !seenUp && a == "up":
			seenUp = true
		case seenUp && (a == "--build" || a == "--abort-on-container-exit"):
		case seenUp && a == "--exit-code-from":
			up.exitFrom = value()
		case seenUp && a == "--scale":
			name, n, _ := strings.Cut(value(), "=")
			k, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("docker compose %s: --scale %s=%s: %v", strings.Join(args, " "), name, n, err)
			}
			up.scale[name] = k
		case seenUp && !strings.HasPrefix(a, "-"):
			up.targets = append(up.targets, a)
		default:
			t.Fatalf("docker compose %s: the test does not model %s", strings.Join(args, " "), a)
		}
	}
	if up.exitFrom == "" {
		t.Fatalf("docker compose %s: without --exit-code-from the test does not know which service's exit ends the run", strings.Join(args, " "))
	}
	return up
}

// services returns the services up starts, each after those it depends
// on: its targets (or every service its profiles enable) and their
// dependencies.
func (up composeUp) services(t *testing.T, p composeProject) []string {
	t.Helper()
	targets := up.targets
	if len(targets) == 0 {
		for name, svc := range p.Services {
			if len(svc.Profiles) == 0 || slices.ContainsFunc(svc.Profiles, func(s string) bool { return slices.Contains(up.profiles, s) }) {
				targets = append(targets, name)
			}
		}
		slices.Sort(targets)
	}
	var order []string
	var visit func(name string, path []string)
	visit = func(name string, path []string) {
		if slices.Contains(path, name) {
			t.Fatalf("depends_on cycle: %v", append(path, name))
		}
		if slices.Contains(order, name) {
			return
		}
		svc, ok := p.Services[name]
		if !ok {
			t.Fatalf("no service %q (in %v)", name, path)
		}
		deps := make([]string, 0, len(svc.DependsOn))
		for d := range svc.DependsOn {
			deps = append(deps, d)
		}
		slices.Sort(deps)
		for _, d := range deps {
			visit(d, append(path, name))
		}
		order = append(order, name)
	}
	for _, name := range targets {
		visit(name, nil)
	}
	return order
}

// mount is a volume of a service: the container path and where the test
// keeps its files.
type mount struct{ target, host string }

// composeRun holds what a run of the file maps: the project directory
// (where ./ bind mounts start), the named volumes, the addresses of the
// services emulated in this process and the MinIO server among them.
type composeRun struct {
	project string
	named   map[string]string
	addrs   []serviceAddr
	minio   *s3test.Server
}

// serviceAddr is a service's address as the others name it (service:port)
// and where the test serves it (host:port).
type serviceAddr struct{ from, to string }

// mounts maps the volumes of service name.
func (r *composeRun) mounts(t *testing.T, p composeProject, name string) []mount {
	t.Helper()
	var ms []mount
	for _, v := range p.Services[name].Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[1], "/") {
			t.Fatalf("service %s: volume %q: want SOURCE:/PATH[:MODE]", name, v)
		}
		src := parts[0]
		switch {
		case src == "." || strings.HasPrefix(src, "./"):
			src = filepath.Join(r.project, filepath.FromSlash(src))
		case p.Volumes != nil && hasKey(p.Volumes, src):
			if r.named[src] == "" {
				r.named[src] = t.TempDir()
			}
			src = r.named[src]
		default:
			t.Fatalf("service %s: volume %q is neither ./PATH nor a volume the file declares", name, v)
		}
		ms = append(ms, mount{parts[1], src})
	}
	return ms
}

// hasKey reports whether m has key k.
func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// hostPath maps the container path p through ms, the longest mount first.
func hostPath(ms []mount, p string) (string, bool) {
	best := -1
	for i, m := range ms {
		if (p == m.target || strings.HasPrefix(p, strings.TrimSuffix(m.target, "/")+"/")) && (best < 0 || len(m.target) > len(ms[best].target)) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	return filepath.Join(ms[best].host, filepath.FromSlash(strings.TrimPrefix(p, ms[best].target))), true
}

// interpolate applies Compose's interpolation to a value of service name:
// $$ is a $; a variable ($VAR, ${VAR}), which Compose would take from the
// shell or an .env file, fails the test.
func interpolate(t *testing.T, name, s string) string {
	t.Helper()
	if strings.Contains(strings.ReplaceAll(s, "$$", ""), "$") {
		t.Fatalf("service %s: %q: the test does not model Compose's variable interpolation", name, s)
	}
	return strings.ReplaceAll(s, "$$", "$")
}

// subst interpolates a value of service name (an argument, an environment
// value, a script) and substitutes the address of each service emulated
// in this process (//service:port, as in a URL) with the test's. A URL
// naming such a service on a port it does not serve fails the test.
func (r *composeRun) subst(t *testing.T, name, s string) string {
	t.Helper()
	s = interpolate(t, name, s)
	for _, a := range r.addrs {
		s = strings.ReplaceAll(s, "//"+a.from, "//"+a.to)
		if host, _, _ := strings.Cut(a.from, ":"); strings.Contains(s, "//"+host+":") {
			t.Fatalf("service %s: %q names service %s on a port it does not serve (%s)", name, s, host, a.from)
		}
	}
	return s
}

// arg applies the substitutions the test makes to an argument of service
// name: those of subst, and a container path becomes where its volume
// lives.
func (r *composeRun) arg(t *testing.T, name string, ms []mount, a string) string {
	t.Helper()
	a = r.subst(t, name, a)
	flagPart, value := "", a
	if strings.HasPrefix(a, "-") {
		if k, v, ok := strings.Cut(a, "="); ok {
			flagPart, value = k+"=", v
		} else {
			return a
		}
	}
	if !strings.HasPrefix(value, "/") {
		return a
	}
	host, ok := hostPath(ms, value)
	if !ok {
		t.Fatalf("service %s: %s is in no volume of the service", name, value)
	}
	return flagPart + host
}

// env is the environment of a process of service name: that of a fresh
// container, PATH (path, where the test keeps the image's commands) and
// HOME (an empty directory), then the service's environment through
// subst. Nothing comes from the test's own environment: AWS_* (from a
// developer's shell, or s3test.Start in this process), NATS_URL and the
// like do not reach the services, which get what the compose file gives
// them.
func (r *composeRun) env(t *testing.T, name string, svc composeService, path string) []string {
	t.Helper()
	env := []string{"PATH=" + path, "HOME=" + t.TempDir()}
	for _, k := range slices.Sorted(maps.Keys(svc.Environment)) {
		env = append(env, k+"="+r.subst(t, name, svc.Environment[k]))
	}
	return env
}

// startNATS runs the nats service in this process: nats-server's own flag
// parser reads its command, of which only the flags listed here are
// emulated (another fails the test), on a loopback port.
func (r *composeRun) startNATS(t *testing.T, p composeProject, name string) {
	t.Helper()
	svc := p.Services[name]
	if tag := strings.TrimPrefix(svc.Image, "nats:"); tag != server.VERSION {
		t.Errorf("service %s runs %s, but neardup embeds nats-server %s", name, svc.Image, server.VERSION)
	}
	if svc.Entrypoint != nil {
		t.Fatalf("service %s: an entrypoint for the nats image is not modelled", name)
	}
	fs := flag.NewFlagSet("nats-server", flag.ContinueOnError)
	var usage strings.Builder
	fs.SetOutput(&usage)
	nop := func() {}
	opts, err := server.ConfigureOptions(fs, svc.Command, nop, nop, nop)
	if err != nil {
		t.Fatalf("service %s: nats-server %q: %v\n%s", name, svc.Command, err, usage.String())
	}
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains([]string{"js", "jetstream", "sd", "store_dir"}, f.Name) {
			t.Fatalf("service %s: the test does not emulate nats-server -%s", name, f.Name)
		}
	})
	if !opts.JetStream {
		t.Fatalf("service %s: %q does not enable JetStream, which neardup needs", name, svc.Command)
	}
	store := t.TempDir() // nats-server's default, a temporary directory
	if opts.StoreDir != "" {
		var ok bool
		if store, ok = hostPath(r.mounts(t, p, name), opts.StoreDir); !ok {
			t.Fatalf("service %s: store %s is in no volume", name, opts.StoreDir)
		}
	}
	opts.StoreDir, opts.Host, opts.Port, opts.NoSigs, opts.NoLog = store, "127.0.0.1", server.RANDOM_PORT, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("service %s: %v", name, err)
	}
	go srv.Start()
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	if !srv.ReadyForConnections(30 * time.Second) {
		t.Fatalf("service %s: not ready after 30s", name)
	}
	u, err := url.Parse(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	r.addrs = append(r.addrs, serviceAddr{fmt.Sprintf("%s:%d", name, server.DEFAULT_PORT), u.Host})
}

// startMinIO runs the minio service in this process: an S3 test server
// (s3test, in memory) on a loopback port for `minio server DIR`, which
// accepts only the root user's key (MINIO_ROOT_USER and
// MINIO_ROOT_PASSWORD, minioadmin for both without them) as MinIO does.
// Of the command, --address (whose port the others name) and
// --console-address (no console is emulated) are modelled; another flag,
// several drives or another environment variable fails the test.
func (r *composeRun) startMinIO(t *testing.T, p composeProject, name string) {
	t.Helper()
	svc := p.Services[name]
	if svc.Entrypoint != nil {
		t.Fatalf("service %s: an entrypoint for the minio image is not modelled", name)
	}
	if len(svc.Command) == 0 || svc.Command[0] != "server" {
		t.Fatalf("service %s: command %q: the test emulates `minio server` only", name, svc.Command)
	}
	port := "9000"
	var drives []string
	for i := 1; i < len(svc.Command); i++ {
		a := interpolate(t, name, svc.Command[i])
		flagName, value, hasValue := strings.Cut(a, "=")
		switch {
		case flagName == "--address" || flagName == "--console-address":
			if !hasValue {
				if i++; i == len(svc.Command) {
					t.Fatalf("service %s: %s needs a value", name, a)
				}
				value = interpolate(t, name, svc.Command[i])
			}
			_, pt, err := net.SplitHostPort(value)
			if err != nil {
				t.Fatalf("service %s: %s %s: %v", name, flagName, value, err)
			}
			if flagName == "--address" {
				port = pt
			}
		case strings.HasPrefix(a, "-"):
			t.Fatalf("service %s: the test does not emulate minio server %s", name, a)
		default:
			drives = append(drives, a)
		}
	}
	if len(drives) != 1 || !strings.HasPrefix(drives[0], "/") || strings.Contains(drives[0], "...") {
		t.Fatalf("service %s: drives %q: the test emulates one local drive (minio server /PATH)", name, drives)
	}
	key := s3test.Key{ID: "minioadmin", Secret: "minioadmin"}
	for k, v := range svc.Environment {
		switch v = interpolate(t, name, v); k {
		case "MINIO_ROOT_USER":
			key.ID = v
		case "MINIO_ROOT_PASSWORD":
			key.Secret = v
		default:
			t.Fatalf("service %s: the test does not emulate %s", name, k)
		}
	}
	if len(key.ID) < 3 || len(key.Secret) < 8 {
		t.Fatalf("service %s: MinIO does not start with a root user shorter than 3 characters or a password shorter than 8", name)
	}
	r.minio = s3test.Run(t)
	r.minio.RequireKey(key)
	u, err := url.Parse(r.minio.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	r.addrs = append(r.addrs, serviceAddr{name + ":" + port, u.Host})
}

// mcCommand returns the command of a service of the minio/mc image: its
// entrypoint and command (the image's entrypoint is mc), through subst, as
// `/bin/sh -c SCRIPT` or `mc ARGS`. The shell is the host's; the PATH it
// gets has mc (the test binary as fakeMC) and sleep, nothing else, so a
// script that calls another program fails.
func (r *composeRun) mcCommand(t *testing.T, name string, svc composeService) (*exec.Cmd, string) {
	t.Helper()
	argv := append(slices.Clone(svc.Entrypoint), svc.Command...)
	if svc.Entrypoint == nil {
		argv = append([]string{mcName}, argv...)
	}
	for i := range argv {
		argv[i] = r.subst(t, name, argv[i])
	}
	path := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{mcName: self, "sleep": sleep} {
		if err := os.Symlink(target, filepath.Join(path, link)); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case argv[0] == mcName:
		return exec.Command(filepath.Join(path, mcName), argv[1:]...), path
	case (argv[0] == "/bin/sh" || argv[0] == "sh") && len(argv) == 3 && argv[1] == "-c":
		return exec.Command("/bin/sh", argv[1:]...), path
	}
	t.Fatalf("service %s: %q: the test runs `mc ARGS` or `/bin/sh -c SCRIPT` for the minio/mc image", name, argv)
	return nil, ""
}

// cliCommands are the commands of each neardup program.
var cliCommands = map[string][]cli.Command{"coordinator": cli.Coordinator(), "worker": cli.Worker()}

// neardupArgs returns the program a service built from the Dockerfile
// runs, its commands and its arguments (entrypoint, then command).
func neardupArgs(t *testing.T, ib imageBuild, name string, svc composeService) (string, []cli.Command, []string) {
	t.Helper()
	if svc.Build.Context != "." || len(svc.Entrypoint) == 0 {
		t.Fatalf("service %s: want build: . and an entrypoint naming a command of the image", name)
	}
	prog := ib.binary(svc.Entrypoint[0])
	cmds, ok := cliCommands[prog]
	if !ok {
		t.Fatalf("service %s: entrypoint %s is not a neardup program the image has (%s%v)", name, svc.Entrypoint[0], ib.binDir, ib.commands)
	}
	return prog, cmds, append(slices.Clone(svc.Entrypoint[1:]), svc.Command...)
}

// TestComposeFile reads docker-compose.yml with a YAML library and runs
// each `docker compose up` command of README.md and docs/*.md (in
// docs/operations.md, "Several machines") with its services as
// local processes or emulated in this process:
//
//   - the nats service (image nats) as a nats-server in this process on a
//     loopback port, its store in its volume;
//   - the minio service (image minio/minio) as an S3 test server in this
//     process on a loopback port, accepting only the root user's key of
//     its environment (startMinIO);
//   - a service of the minio/mc image (minio-setup) as its shell script
//     run by /bin/sh, with mc that of the test (fakeMC, over S3, so its
//     bucket is the one its script names and its key must be accepted);
//   - every other service as the built program its entrypoint names in
//     the image, with its command's arguments, as many replicas as
//     deploy.replicas or --scale say.
//
// Only the addresses of the emulated services (nats:4222, minio:9000 in
// arguments, environment values and scripts) and the volumes' container
// paths are substituted, so a renamed flag fails the test. A process's
// environment is the service's environment, not the test's (env).
// depends_on is followed: a service waits for a dependency with
// condition service_completed_successfully to exit 0. As Compose does
// with --exit-code-from (which implies --abort-on-container-exit), the
// run ends when the first of the services the command names (all if it
// names none) exits: it must be the --exit-code-from service, exiting 0;
// only a dependency that others wait for may exit before it. Its output
// must then be the same as that of an embedded run of the same job: the
// files of a local output, or the objects of an output in a bucket.
func TestComposeFile(t *testing.T) {
	p := readCompose(t, "docker-compose.yml")
	ib := readDockerfile(t)
	var docs []byte
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b...)
	}
	for name, svc := range p.Services {
		if svc.Build.Context != "" {
			for arg := range svc.Build.Args {
				if _, ok := ib.buildArgs[arg]; !ok {
					t.Errorf("service %s: build argument %s is no ARG of the Dockerfile", name, arg)
				}
			}
			prog, cmds, args := neardupArgs(t, ib, name, svc)
			if err := cli.CheckArgs(cmds, args); err != nil {
				t.Errorf("service %s: %s %v", name, prog, err)
			}
		}
		if n := svc.Deploy.Replicas; n != nil && !strings.Contains(string(docs), fmt.Sprintf("`deploy.replicas: %d`", *n)) {
			t.Errorf("service %s has deploy.replicas: %d, which neither README.md nor docs/*.md says (as `deploy.replicas: %d`)", name, *n, *n)
		}
	}
	for _, up := range docComposeUps(t) {
		t.Run(up.line, func(t *testing.T) { runComposeUp(t, p, ib, up) })
	}
}

// runComposeUp runs one `docker compose up` command as TestComposeFile
// describes.
func runComposeUp(t *testing.T, p composeProject, ib imageBuild, up composeUp) {
	order := up.services(t, p)
	r := &composeRun{project: t.TempDir(), named: map[string]string{}}
	testdata, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testdata, filepath.Join(r.project, "testdata")); err != nil {
		t.Fatal(err)
	}
	setup := exec.Command("sh", "-ec", strings.Join(up.setup, "\n"))
	setup.Dir = r.project
	if b, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("the lines before %q in its block: %v\n%s", up.line, err, b)
	}

	// Compose watches the services the command names, or all: the first
	// of them to exit ends the run.
	watched := up.targets
	if len(watched) == 0 {
		watched = order
	}
	awaited := map[string]bool{} // services another waits for to complete
	for _, name := range order {
		for d, cond := range p.Services[name].DependsOn {
			switch cond {
			case "service_started":
			case "service_completed_successfully":
				awaited[d] = true
			default:
				t.Fatalf("service %s: depends_on %s with condition %s is not modelled", name, d, cond)
			}
		}
	}

	type exit struct {
		name string
		p    *proc
		err  error
	}
	exits := make(chan exit, 64)
	running := map[*proc]string{}
	started, completed := map[string]int{}, map[string]int{} // processes of each service
	finished := false
	// next waits for a process to exit, and judges the exit; on timeout it
	// shows the output of service waitedFor.
	next := func(timeout <-chan time.Time, waiting, waitedFor string) {
		t.Helper()
		var e exit
		select {
		case e = <-exits:
		case <-timeout:
			var outs []string
			for pr, name := range running {
				if name == waitedFor {
					outs = append(outs, pr.output())
				}
			}
			t.Fatalf("%s: timed out; the output of %s:\n%s", waiting, waitedFor, strings.Join(outs, "\n"))
		}
		delete(running, e.p)
		switch {
		case e.name == up.exitFrom && e.err == nil:
			finished = true
		case e.name == up.exitFrom:
			t.Fatalf("service %s exited with %v:\n%s", e.name, e.err, e.p.output())
		case slices.Contains(watched, e.name):
			t.Fatalf("service %s exited (%v) while %s ran, which would end Compose's run (the first of %v to exit does):\n%s", e.name, e.err, up.exitFrom, watched, e.p.output())
		case awaited[e.name] && e.err == nil:
			completed[e.name]++
		case awaited[e.name]:
			t.Fatalf("service %s did not complete successfully (%v), which fails Compose's run:\n%s", e.name, e.err, e.p.output())
		default:
			t.Fatalf("service %s exited (%v) while %s ran:\n%s", e.name, e.err, up.exitFrom, e.p.output())
		}
	}

	var target []string // the --exit-code-from service's arguments
	for _, name := range order {
		svc := p.Services[name]
		for _, d := range slices.Sorted(maps.Keys(svc.DependsOn)) {
			if svc.DependsOn[d] != "service_completed_successfully" {
				continue
			}
			if started[d] == 0 {
				t.Fatalf("service %s waits for %s to complete, which runs no process here", name, d)
			}
			timeout := time.After(2 * time.Minute)
			for completed[d] < started[d] {
				next(timeout, fmt.Sprintf("service %s waiting for %s to complete", name, d), d)
			}
		}
		n := 1
		if svc.Deploy.Replicas != nil {
			n = *svc.Deploy.Replicas
		}
		if k, ok := up.scale[name]; ok {
			n = k
		}
		var cmd func() *exec.Cmd
		var env []string
		switch {
		case strings.HasPrefix(svc.Image, "nats:"):
			r.startNATS(t, p, name)
			continue
		case strings.HasPrefix(svc.Image, "minio/minio:"):
			r.startMinIO(t, p, name)
			continue
		case strings.HasPrefix(svc.Image, "minio/mc:"):
			c, path := r.mcCommand(t, name, svc)
			env = r.env(t, name, svc, path)
			cmd = func() *exec.Cmd { return exec.Command(c.Path, c.Args[1:]...) }
			t.Logf("service %s (%d): %q", name, n, c.Args)
		case svc.Build.Context != "":
			prog, _, raw := neardupArgs(t, ib, name, svc)
			ms := r.mounts(t, p, name)
			args := make([]string, len(raw))
			for i, a := range raw {
				args[i] = r.arg(t, name, ms, a)
			}
			env = r.env(t, name, svc, bin)
			cmd = func() *exec.Cmd { return command(prog, args...) }
			if name == up.exitFrom {
				if n != 1 {
					t.Fatalf("--exit-code-from %s, a service with %d replicas", name, n)
				}
				target = args
			}
			t.Logf("service %s (%d): %s %q", name, n, prog, args)
		default:
			t.Fatalf("service %s: image %s: the test cannot run it", name, svc.Image)
		}
		for range n {
			pr := startCmd(t, cmd(), env)
			running[pr] = name
			started[name]++
			go func() {
				err := <-pr.done
				pr.done <- err
				exits <- exit{name, pr, err}
			}()
		}
	}
	if target == nil {
		t.Fatalf("--exit-code-from %s: a neardup service the command does not start", up.exitFrom)
	}

	// The run: up to the --exit-code-from service's exit.
	timeout := time.After(3 * time.Minute)
	for !finished {
		next(timeout, "waiting 3 minutes for "+up.exitFrom+" to exit", up.exitFrom)
	}
	// Then Compose stops the others with their stop_signal and waits up to
	// their stop_grace_period.
	stopBy := time.Now()
	for pr, name := range running {
		svc := p.Services[name]
		pr.cmd.Process.Signal(stopSignal(t, name, svc.StopSignal))
		grace := 10 * time.Second
		if svc.StopGracePeriod != "" {
			if grace, err = time.ParseDuration(svc.StopGracePeriod); err != nil {
				t.Fatalf("service %s: stop_grace_period: %v", name, err)
			}
		}
		if by := time.Now().Add(grace); by.After(stopBy) {
			stopBy = by
		}
	}
	for len(running) > 0 {
		select {
		case e := <-exits:
			delete(running, e.p)
			if e.err != nil {
				t.Errorf("service %s exited with %v when stopped:\n%s", e.name, e.err, e.p.output())
			}
		case <-time.After(time.Until(stopBy)):
			t.Fatalf("%d processes still running after their stop_grace_period", len(running))
		}
	}

	// The same job, embedded: the target's arguments without --nats, into
	// another directory, with two in-process workers.
	out, ref := "", filepath.Join(t.TempDir(), "ref")
	refArgs := []string{"--workers", "2"}
	for i := 0; i < len(target); i++ {
		switch target[i] {
		case "--nats":
			i++
		case "--out":
			i++
			out = target[i]
			refArgs = append(refArgs, "--out", ref)
		default:
			refArgs = append(refArgs, target[i])
		}
	}
	if out == "" {
		t.Fatalf("service %s: no --out", up.exitFrom)
	}
	run(t, "coordinator", refArgs...)
	if !storage.IsURL(out) {
		sameResults(t, ref, out)
		return
	}
	// An output in a bucket: read as a client of the MinIO service with
	// its root user's key.
	if r.minio == nil {
		t.Fatalf("service %s writes to %s, but the command runs no MinIO service", up.exitFrom, out)
	}
	for k, v := range r.minio.Env() {
		t.Setenv(k, v)
	}
	sameInBucket(t, ref, out)
}

// stopSignal is the signal a stop_signal value names (SIGTERM if empty).
func stopSignal(t *testing.T, name, s string) syscall.Signal {
	t.Helper()
	sig, ok := map[string]syscall.Signal{"": syscall.SIGTERM, "SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT}[s]
	if !ok {
		t.Fatalf("service %s: stop_signal %q is not modelled", name, s)
	}
	return sig
}
