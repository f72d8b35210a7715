package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.yaml.in/yaml/v3"

	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

var (
	composeChaosRuns  = flag.Int("compose-chaos-runs", 1, "seeded fault runs of TestComposeContainers, seeds 1..N (0: only the undisturbed run)")
	composeDocs       = flag.Int("compose-docs", 200_000, "documents of TestComposeContainers' corpus")
	composeDisconnect = flag.Duration("compose-disconnect", 30*time.Second, "how long a fault of TestComposeContainers keeps a worker off the network")
)

// composeJobArgs are the job parameters of TestComposeContainers' runs
// and of their embedded reference.
var composeJobArgs = []string{"--partitions", "16"}

// composeQueueArgs are the delivery rules of the cluster's workers and
// coordinator in TestComposeContainers: a task of a worker that is gone
// goes to another after 10 seconds (30 by default).
var composeQueueArgs = []string{"--ack-wait", "10s"}

// composeProjectName is the compose project of TestComposeContainers.
const composeProjectName = "neardup-e2e"

// composeCluster is the compose file's cluster, docker-compose.yml with
// docker-compose.cluster.yml and its s3 profile, run by the test's own
// dockerd, with one more override file of the test's (test.yml): the
// S3 server's and a NATS server's ports published on loopback, the job's
// inputs in the bucket, its output under a name of each run.
type composeCluster struct {
	d       *dockerd
	dir     string   // the project directory
	compose []string // docker-compose, or docker compose
	// The commands of worker-s3 and coordinator-s3 in the cluster
	// override, and the S3 server's key (its environment there).
	workerCmd, coordCmd []string
	key                 s3test.Key
}

// newComposeCluster copies the compose files into a project directory and
// reads the cluster override. It skips (fails in CI) without a compose
// command.
func newComposeCluster(t *testing.T, d *dockerd) *composeCluster {
	t.Helper()
	c := &composeCluster{d: d, dir: t.TempDir()}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		c.compose = []string{"docker-compose"}
	} else if d.command("compose", "version").Run() == nil {
		c.compose = []string{"docker", "compose"}
	} else {
		skipOrFail(t, "neither docker-compose nor docker compose (apt-get install docker-compose)")
	}
	for _, f := range []string{"docker-compose.yml", "docker-compose.cluster.yml"} {
		if err := copyFile(filepath.Join("..", f), filepath.Join(c.dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	// The bind mount ./data of the neardup services.
	if err := os.MkdirAll(filepath.Join(c.dir, "data", "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := readCompose(t, "docker-compose.cluster.yml")
	c.workerCmd, c.coordCmd = p.Services["worker-s3"].Command, p.Services["coordinator-s3"].Command
	env := p.Services["minio"].Environment
	c.key = s3test.Key{ID: env["AWS_ACCESS_KEY_ID"], Secret: env["AWS_SECRET_ACCESS_KEY"]}
	if len(c.workerCmd) == 0 || len(c.coordCmd) == 0 || c.key.ID == "" {
		t.Fatalf("docker-compose.cluster.yml: want commands for worker-s3 and coordinator-s3 and the S3 key in minio's environment")
	}
	if in := c.coordCmd[len(c.coordCmd)-1]; in != "/data/in" {
		t.Fatalf("docker-compose.cluster.yml: coordinator-s3's input is %s; the test replaces /data/in", in)
	}
	return c
}

// command is a compose command for the project, with the s3 profile.
func (c *composeCluster) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.compose[0], append(append(slices.Clone(c.compose[1:]), "--profile", "s3"), args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+c.d.host, "DOCKER_CONFIG="+filepath.Join(c.d.dir, "client"),
		"COMPOSE_FILE=docker-compose.yml:docker-compose.cluster.yml:test.yml", "COMPOSE_PROJECT_NAME="+composeProjectName)
	return cmd
}

// run runs a compose command and returns its output, failing the test on
// error.
func (c *composeCluster) run(t *testing.T, args ...string) string {
	t.Helper()
	return output(t, c.command(args...))
}

// containers lists the IDs of the containers of a service.
func (c *composeCluster) containers(t *testing.T, service string) []string {
	t.Helper()
	ids, err := c.ids(service)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// s3URL is the URL of name in the bucket neardup: as the cluster's
// services reach it (the cluster override's endpoint) or, with host, as
// this process does through the published port.
func (c *composeCluster) s3URL(t *testing.T, name string, host bool) string {
	t.Helper()
	out := c.coordCmd[slices.Index(c.coordCmd, "--out")+1]
	u, err := url.Parse(out)
	if err != nil || u.Scheme != "s3" {
		t.Fatalf("coordinator-s3's --out %s: want an s3:// URL (%v)", out, err)
	}
	u.Path = "/" + name
	if host {
		addr := strings.TrimSpace(c.run(t, "port", "minio", "9000"))
		q := u.Query()
		q.Set("endpoint", "http://"+addr)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// writeOverride writes test.yml: ports of the S3 server and of the first
// NATS server published on loopback; the workers' and the coordinator's
// commands of the cluster override with the test's delivery rules, and
// the coordinator's with the job's parameters, its inputs in the bucket
// (in/) and its output named out.
func (c *composeCluster) writeOverride(t *testing.T, out string) {
	t.Helper()
	coord := slices.Clone(c.coordCmd)
	coord[slices.Index(coord, "--out")+1] = c.s3URL(t, out, false)
	coord[len(coord)-1] = c.s3URL(t, "in", false)
	coord = append(append(coord, composeQueueArgs...), composeJobArgs...)
	override := map[string]any{"services": map[string]any{
		"minio":          map[string]any{"ports": []string{"127.0.0.1::9000"}},
		"nats":           map[string]any{"ports": []string{"127.0.0.1::4222"}},
		"worker-s3":      map[string]any{"command": append(slices.Clone(c.workerCmd), composeQueueArgs...)},
		"coordinator-s3": map[string]any{"command": coord},
	}}
	b, err := yaml.Marshal(override)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "test.yml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setS3Env points this process's S3 client at the cluster's S3 server.
func (c *composeCluster) setS3Env(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": c.key.ID, "AWS_SECRET_ACCESS_KEY": c.key.Secret, "AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	os.Unsetenv("AWS_ENDPOINT_URL")
}

// upload copies the files of dir into the bucket under prefix, through the
// published port.
func (c *composeCluster) upload(t *testing.T, dir, prefix string) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, c.s3URL(t, prefix, true))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(ctx, st, e.Name(), b); err != nil {
			t.Fatalf("upload %s: %v", e.Name(), err)
		}
	}
}

// TestComposeContainers runs the compose file's cluster in containers,
// from images built here with no registry (scripts/build-images): a
// dockerd of the test's own (startDockerd), then docker-compose.yml with
// docker-compose.cluster.yml and its s3 profile: three NATS servers
// routed together, the task stream and job state kept on all three
// (--replicas 3), three workers, the coordinator, and the S3 test server
// (cmd/s3test) holding the inputs and the output. The corpus is
// -compose-docs generated documents (200,000), uploaded through the S3
// server's published port.
//
// First an undisturbed job, whose results (pairs/, candidates/,
// clusters.parquet, duplicates.parquet, exact.parquet) must be byte for
// byte those of the embedded job on the same corpus, with its task
// stream on three servers. Then -compose-chaos-runs seeded runs (CI runs
// one), each a job under 3 to 5 faults of distinct kinds thrown at its
// containers at moments drawn from its first 20 seconds, so that they may
// overlap, but never two on one container (composeChaos):
//
//   - kill worker: docker kill of a worker, started again 1 to 4 s later;
//   - kill NATS: docker kill of a NATS server, started again 2 to 8 s later;
//   - pause coordinator: docker pause of the coordinator past its lease
//     (15 s), then unpause; it must stop with exit status 5 (lease lost),
//     and is started again with the same command, as an operator would;
//   - disconnect worker: a worker off the network for -compose-disconnect
//     (30 s), then connected again;
//   - restart S3: docker restart of the S3 server (its objects on its
//     volume).
//
// Each job must end byte-identical to the embedded one. The test logs,
// per run, the seed, the faults thrown, the outcome and the wall time.
// Its cleanup removes every container, network and volume and stops the
// dockerd (even when the test fails).
func TestComposeContainers(t *testing.T) {
	begun := time.Now()
	d := startDockerd(t)
	c := newComposeCluster(t, d)
	// The cluster goes down before the daemon stops (cleanups run last
	// first), removing its containers, network and volumes.
	t.Cleanup(func() {
		if out, err := c.command("down", "-v", "--remove-orphans", "-t", "5").CombinedOutput(); err != nil {
			t.Errorf("cleanup: compose down: %v\n%s", err, out)
		}
	})

	build := exec.Command("bash", "../scripts/build-images")
	build.Env = append(os.Environ(), "DOCKER_HOST="+d.host, "DOCKER_CONFIG="+filepath.Join(d.dir, "client"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build-images: %v\n%s", err, out)
	}
	t.Logf("images built: %v", time.Since(begun).Round(time.Second))

	// The reference: the embedded job (its own NATS, two workers in its
	// process) of the image's coordinator, in a container with no network,
	// as the test's user: the binaries write their build into every
	// Parquet file (created_by), so only the same build's output can be
	// byte-identical.
	in, refDir := t.TempDir(), t.TempDir()
	run(t, "gencorpus", "-n", fmt.Sprint(*composeDocs), "-seed", "33", "-format", "jsonl", "-gzip", "-files", "24", "-truth", "", "-q", "-out", in)
	refBegun := time.Now()
	d.docker(t, append(append([]string{"run", "--rm", "--network", "none", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"-v", in + ":/in:ro", "-v", refDir + ":/ref", "neardup:local", "--out", "/ref/out", "--workers", "2", "--quiet"}, composeJobArgs...), "/in")...)
	ref := filepath.Join(refDir, "out")
	t.Logf("corpus of %d documents and its embedded job: %v (the job %v)", *composeDocs, time.Since(begun).Round(time.Second), time.Since(refBegun).Round(time.Second))

	// The S3 server and its bucket, then the inputs.
	c.writeOverride(t, "undisturbed")
	c.run(t, "up", "-d", "minio-setup")
	for _, id := range c.containers(t, "minio-setup") {
		if code := d.waitExit(t, id, 2*time.Minute); code != 0 {
			t.Fatalf("minio-setup exited with %d:\n%s", code, d.logs(id))
		}
	}
	c.setS3Env(t)
	c.upload(t, in, "in")
	t.Logf("cluster's S3 server up, inputs uploaded: %v", time.Since(begun).Round(time.Second))

	t.Run("undisturbed", func(t *testing.T) {
		runBegun := time.Now()
		c.run(t, "up", "-d", "coordinator-s3")
		coord := c.containers(t, "coordinator-s3")[0]
		if code := d.waitExit(t, coord, 15*time.Minute); code != 0 {
			t.Fatalf("coordinator-s3 exited with %d:\n%s", code, d.logs(coord))
		}
		sameInBucket(t, ref, c.s3URL(t, "undisturbed", true))
		checkR3(t, c)
		t.Logf("undisturbed: identical to the embedded job; %v", time.Since(runBegun).Round(time.Second))
	})
	if t.Failed() {
		return
	}
	for seed := 1; seed <= *composeChaosRuns; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			composeChaos(t, c, ref, uint64(seed))
		})
	}
	t.Logf("TestComposeContainers: %v in all", time.Since(begun).Round(time.Second))
}

// checkR3 checks, through the first NATS server's published port, that
// the task stream is kept on three servers, all current.
func checkR3(t *testing.T, c *composeCluster) {
	t.Helper()
	addr := strings.TrimSpace(c.run(t, "port", "nats", "4222"))
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, queue.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	current := 0
	if info.Cluster != nil && info.Cluster.Leader != "" {
		current = 1
		for _, p := range info.Cluster.Replicas {
			if p.Current {
				current++
			}
		}
	}
	if info.Config.Replicas != 3 || current != 3 {
		t.Errorf("stream %s: %d replicas configured, %d servers current (%+v), want 3 and 3", queue.StreamName, info.Config.Replicas, current, info.Cluster)
	}
}

// composeFault is a fault thrown at the cluster's containers: it breaks
// something and, before it returns, mends it (starts again what it
// stopped).
type composeFault struct {
	name  string
	throw func(c *composeCluster, r *rand.Rand, v victims) error
}

// victims are the containers a run's faults are thrown at: the
// coordinator's, and the workers' in a random order, the first for a kill
// and the second to go off the network, so that no two faults of a run
// hit one container at once.
type victims struct {
	coord   string
	workers []string
}

// composeFaults are the kinds of fault of TestComposeContainers.
var composeFaults = []composeFault{
	{"kill worker", func(c *composeCluster, r *rand.Rand, v victims) error {
		return c.d.stopFor(v.workers[0], "kill", "start", time.Duration(1000+r.IntN(3000))*time.Millisecond)
	}},
	{"kill NATS", func(c *composeCluster, r *rand.Rand, _ victims) error {
		ids, err := c.ids(pick(r, []string{"nats", "nats-2", "nats-3"}))
		if err != nil {
			return err
		}
		return c.d.stopFor(ids[0], "kill", "start", time.Duration(2000+r.IntN(6000))*time.Millisecond)
	}},
	{"pause coordinator", func(c *composeCluster, _ *rand.Rand, v victims) error {
		return c.d.stopFor(v.coord, "pause", "unpause", leaseLife+2*time.Second)
	}},
	{"disconnect worker", func(c *composeCluster, _ *rand.Rand, v victims) error {
		network := composeProjectName + "_default"
		return c.d.stopFor(v.workers[1], "network disconnect "+network, "network connect "+network, *composeDisconnect)
	}},
	{"restart S3", func(c *composeCluster, _ *rand.Rand, _ victims) error {
		ids, err := c.ids("minio")
		if err != nil {
			return err
		}
		return c.d.try("restart", "-t", "10", ids[0])
	}},
}

// stopFor runs `docker BREAK id`, waits for wait, and runs `docker MEND
// id`.
func (d *dockerd) stopFor(id, breakCmd, mendCmd string, wait time.Duration) error {
	if err := d.try(append(strings.Fields(breakCmd), id)...); err != nil {
		return err
	}
	time.Sleep(wait)
	return d.try(append(strings.Fields(mendCmd), id)...)
}

// try runs a docker command; its error carries its output.
func (d *dockerd) try(args ...string) error {
	if out, err := d.command(args...).CombinedOutput(); err != nil {
		return fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ids lists the IDs of the containers of a service, or an error.
func (c *composeCluster) ids(service string) ([]string, error) {
	out, err := c.command("ps", "-q", service).CombinedOutput()
	ids := strings.Fields(string(out))
	if err != nil || len(ids) == 0 {
		return nil, fmt.Errorf("compose ps -q %s: %v: %s", service, err, out)
	}
	return ids, nil
}

// pick is an element of s at random.
func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// composeChaos runs one seeded job of TestComposeContainers under faults
// and compares its results with the embedded job's (ref). Its faults are
// 3 to 5 of distinct kinds, each thrown at a moment drawn from the first
// 20 seconds after the job is planned, so that they may overlap (a worker
// off the network while the S3 server restarts), but never two on one
// container (victims); one whose moment comes after the job ended is not
// thrown, and said so.
func composeChaos(t *testing.T, c *composeCluster, ref string, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x636f6d706f7365))
	out := fmt.Sprintf("chaos-%d", seed)
	begun := time.Now()
	c.writeOverride(t, out)
	c.run(t, "up", "-d", "coordinator-s3")
	coord := c.containers(t, "coordinator-s3")[0]
	running := func() bool {
		b, err := c.d.command("inspect", "-f", "{{.State.Running}}", coord).Output()
		return err == nil && strings.TrimSpace(string(b)) == "true"
	}
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(c.d.logs(coord), "job planned"); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) || !running() {
			t.Fatalf("seed %d: no job planned:\n%s", seed, c.d.logs(coord))
		}
	}
	planned := time.Now()

	type result struct {
		name       string
		at, lasted time.Duration
		thrown     bool
		err        error
	}
	workers := c.containers(t, "worker-s3")
	if len(workers) < 2 {
		t.Fatalf("%d workers: the faults need two", len(workers))
	}
	v := victims{coord: coord, workers: workers}
	r.Shuffle(len(workers), func(i, j int) { workers[i], workers[j] = workers[j], workers[i] })
	kinds := r.Perm(len(composeFaults))[:3+r.IntN(3)]
	results := make(chan result, len(kinds))
	paused := false
	for _, k := range kinds {
		f := composeFaults[k]
		at := time.Duration(2000+r.IntN(18000)) * time.Millisecond
		fr := rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))
		paused = paused || f.name == "pause coordinator"
		go func() {
			time.Sleep(time.Until(planned.Add(at)))
			if !running() {
				results <- result{name: f.name, at: at}
				return
			}
			began := time.Now()
			err := f.throw(c, fr, v)
			results <- result{f.name, at, time.Since(began), true, err}
		}()
	}
	var thrown, skipped []string
	for range kinds {
		res := <-results
		switch {
		case res.err != nil:
			t.Errorf("seed %d: %s: %v", seed, res.name, res.err)
		case !res.thrown:
			skipped = append(skipped, res.name)
			t.Logf("seed %d: %s not thrown: the job had ended %v after it was planned", seed, res.name, res.at.Round(time.Second))
		default:
			thrown = append(thrown, res.name)
			t.Logf("seed %d: %s at %v, for %v", seed, res.name, res.at.Round(time.Second), res.lasted.Round(time.Second))
		}
	}
	outcome := "completed"
	code := c.d.waitExit(t, coord, 20*time.Minute)
	if paused && code == 5 && strings.Contains(c.d.logs(coord), "lease lost") {
		// Woken past its lease, it stopped, as it must when it cannot
		// know that no other took the job: the same command resumes it.
		outcome = "lease lost, started again, completed"
		c.d.docker(t, "start", coord)
		code = c.d.waitExit(t, coord, 20*time.Minute)
	}
	if code != 0 {
		t.Fatalf("seed %d, after %v: coordinator-s3 exited with %d:\n%s", seed, thrown, code, c.d.logs(coord))
	}
	// Every service is up again (each fault ends by mending what it
	// broke).
	for _, svc := range []string{"nats", "nats-2", "nats-3", "minio", "worker-s3"} {
		for _, id := range c.containers(t, svc) {
			if state := strings.TrimSpace(c.d.docker(t, "inspect", "-f", "{{.State.Status}}", id)); state != "running" {
				t.Errorf("seed %d: container %s of %s is %s after the job; its networks: %s; its output:\n%s", seed, id, svc, state,
					c.d.docker(t, "inspect", "-f", "{{json .NetworkSettings.Networks}}", id), c.d.logs(id))
				c.d.docker(t, "start", id)
			}
		}
	}
	sameInBucket(t, ref, c.s3URL(t, out, true))
	t.Logf("seed %d: %d faults thrown (%s), %d not; %s; identical to the embedded job; %v",
		seed, len(thrown), strings.Join(thrown, ", "), len(skipped), outcome, time.Since(begun).Round(time.Second))
}
