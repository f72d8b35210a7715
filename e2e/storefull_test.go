package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
)

// TestEmbeddedStoreFull fills, for a few seconds, the small tmpfs that
// holds the embedded NATS server's store (--nats-store) while a job runs:
// NATS turns JetStream off when a write meets the full disk, and keeps it
// off after the disk has room again. The coordinator must not hang: it
// stops within a bound, exit 1, naming the store and how to resume; the
// same command then resumes the job, which ends byte-identical to an
// undisturbed run. (If the full spell met no write of the store, the job
// may also just complete: the test then says so and checks the output.)
// Mounting a tmpfs needs root, as CI has (smallDisk).
func TestEmbeddedStoreFull(t *testing.T) {
	in, ref := corpusAndReference(t)
	disk := smallDisk(t, "48m")
	store := filepath.Join(disk, "nats")
	out := filepath.Join(t.TempDir(), "out")
	args := append(append([]string{"--out", out, "--nats-store", store, "--workers", "2", "--ack-wait", "2s", "--disk-full-timeout", "20s"}, jobArgs...), in)
	// Reduce tasks take 2 s each: the full spell falls inside the job.
	env := []string{faults.EnvVar + "=slow@reduce/*"}
	coord := start(t, env, "coordinator", args...)
	time.Sleep(3 * time.Second)

	// Fill the disk for 4 seconds.
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	time.Sleep(4 * time.Second)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}

	err := coord.wait(t, 3*time.Minute)
	switch code := exitCode(err); {
	case code == 0:
		t.Logf("the full spell met no write of the store; the job completed:\n%s", tail(coord.output(), 5))
	case code == 1 && strings.Contains(coord.output(), store) && strings.Contains(coord.output(), "run the same command again"):
		t.Logf("stopped, naming the store:\n%s", tail(coord.output(), 3))
		again := start(t, env, "coordinator", args...)
		if err := again.wait(t, 3*time.Minute); err != nil {
			t.Fatalf("the same command again: %v\n%s", err, again.output())
		}
	default:
		t.Fatalf("coordinator after its store was full for 4 s: exit %d, want 0, or 1 naming the store %s and how to resume:\n%s", code, store, coord.output())
	}
	sameResults(t, ref, out)
}

// TestExternalStoreFull runs a job on an outside nats-server process
// whose JetStream store (-sd) is on a small tmpfs, with a worker process,
// and fills that disk once the job is planned, keeping it full. The server
// then stores no write of the job's streams and answers none (it logs "no
// space left on device"): the coordinator must stop, exit 1, within
// --disk-full-timeout of its lease's first failed write (plus one refresh
// period and the time to look at the server; that write may come a minute
// or more after the server's first), naming the server and JetStream's
// error. Once space is freed, the same command must not
// exit 5 (another coordinator) when none runs: the server still stores
// nothing on the stream that failed, so it exits 1 naming the server, or
// completes. Restarted, the server stores again, and the same command
// resumes the job, which ends byte-identical to an undisturbed run.
// Mounting a tmpfs needs root, as CI has (smallDisk).
func TestExternalStoreFull(t *testing.T) {
	disk := smallDisk(t, "16m")
	store := filepath.Join(disk, "js")
	filler := filepath.Join(disk, "filler")
	checkStoreFailure(t, storeFailure{
		server: func() []string { return []string{"-js", "-sd", store} },
		// A full disk fails no write until one needs a page the store
		// does not have yet: the lease's small updates may go on for a
		// minute or more in the last page of its block. The store has
		// failed when the server says so.
		spoil: func(srv *proc) time.Time {
			filled := time.Now()
			fill(t, filler)
			srv.waitFor(t, "no space left on device", 4*time.Minute)
			t.Logf("the server's first failed write came %v after the disk was full", time.Since(filled).Round(time.Second))
			return time.Now()
		},
		want: "no space left on device",
		unspoil: func(srv *proc) {
			if !strings.Contains(srv.output(), "no space left on device") {
				t.Errorf("the server did not meet a full disk (its log says no \"no space left on device\"):\n%s", tail(srv.output(), 20))
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		},
		again: "restarts",
	})
}

// TestExternalStoreLimits runs a job on an outside nats-server process
// whose JetStream may store 8 KB (max_file_store), less than the job's
// state: the server refuses the writes past it ("insufficient
// resources"), the lease's too, and the coordinator took that for a
// reply lost and waited for ever. It must stop, exit 1, within
// --disk-full-timeout of the first refusal (plus one refresh period and
// the time to look at the server), naming the server and JetStream's
// error; the same command again must say the same, not exit 5; with the
// limit raised and the server restarted, the job resumes and ends
// byte-identical to an undisturbed run. No root needed.
func TestExternalStoreLimits(t *testing.T) {
	dir := t.TempDir()
	limit := "8KB"
	checkStoreFailure(t, storeFailure{
		server: func() []string {
			conf := filepath.Join(dir, "nats.conf")
			text := fmt.Sprintf("jetstream { store_dir: %q, max_file_store: %s }\n", filepath.Join(dir, "js"), limit)
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"-c", conf}
		},
		spoil: func(srv *proc) time.Time {
			srv.waitFor(t, "resource limits exceeded", 2*time.Minute)
			return time.Now()
		},
		want:    "insufficient resources",
		unspoil: func(*proc) { limit = "64MB" }, // once restarted
		again:   "insufficient resources",
	})
}

// storeFailure is how an outside server's store fails a job.
type storeFailure struct {
	// server is nats-server's arguments (its store and limits).
	server func() []string
	// spoil makes the store fail once the job is planned, and returns
	// when it began to.
	spoil func(srv *proc) time.Time
	// want is JetStream's error, which the coordinator must say.
	want string
	// unspoil mends what spoil did, short of restarting the server.
	unspoil func(srv *proc)
	// again is what the same command must say once unspoiled, the
	// server still running, if it does not complete.
	again string
}

// checkStoreFailure runs a job on a nats-server process with a worker
// process, and fails its store as f says: the coordinator must exit 1
// within --disk-full-timeout of the first failed write of its lease (plus
// one refresh period and 5 s to look at the server and stop), naming the
// server, f.want and how to resume. Unspoiled, the same command must not
// exit 5 (another coordinator: none runs) but 1 saying f.again, or
// complete; with the server restarted, it must resume the job and end
// byte-identical to an undisturbed run.
func checkStoreFailure(t *testing.T, f storeFailure) {
	natsServer := buildNATSServer(t)
	in, ref := corpusAndReference(t)
	port := strconv.Itoa(freePort(t))
	url := "nats://127.0.0.1:" + port
	startServer := func() *proc {
		args := append(f.server(), "-a", "127.0.0.1", "-p", port, "-n", "e2e-store")
		srv := startCmd(t, exec.Command(natsServer, args...), os.Environ())
		srv.waitFor(t, "Server is ready", 30*time.Second)
		return srv
	}
	srv := startServer()
	// Slow map tasks: the job is still running when the store fails.
	worker := start(t, []string{faults.EnvVar + "=slow@map/*"}, "worker", "--nats", url, "--slots", "2")
	worker.waitFor(t, "worker ready", 30*time.Second)

	const timeout = 10 * time.Second
	out := filepath.Join(t.TempDir(), "out")
	args := append(append([]string{"--out", out, "--nats", url, "--disk-full-timeout", timeout.String()}, jobArgs...), in)
	coord := start(t, nil, "coordinator", args...)
	coord.waitFor(t, "job planned", 60*time.Second)
	spoiled := f.spoil(srv)
	// The job knows of the store only by its own writes. The server's
	// first failed write may be another's (a consumer's acknowledgements,
	// say) while the lease's small updates still fit in the last page of
	// its block, for a minute or more (CI saw 76 s): the bound counts from
	// the lease's first failed refresh, which the coordinator logs when
	// it fails (at most a refresh period after it began), or from the
	// server's first failed write if the job stops without one.
	failed := spoiled
	select {
	case <-coord.watch("could not refresh the coordinator lease"):
		failed = time.Now()
		t.Logf("the lease's first failed refresh was logged %v after the server's first failed write", failed.Sub(spoiled).Round(time.Second))
	case err := <-coord.done:
		coord.done <- err
	case <-time.After(4 * time.Minute):
		t.Fatalf("the coordinator neither stopped nor failed to refresh its lease within 4 minutes of the server's first failed write:\n%s", coord.output())
	}
	err := coord.wait(t, 3*time.Minute)
	took := time.Since(failed)
	o := coord.output()
	if code := exitCode(err); code != 1 {
		t.Fatalf("coordinator with the server's store failing: exit %d, want 1:\n%s", code, o)
	}
	// The lease is written every 5 s; the job stops within the timeout of
	// the start of the first write that failed, and takes a few seconds
	// to look at the server and to stop.
	if bound := timeout + 5*time.Second + 5*time.Second; took > bound {
		t.Errorf("the job stopped %v after its lease's first failed refresh, want within %v", took.Round(time.Second), bound)
	}
	if !strings.Contains(o, "127.0.0.1:"+port) || !strings.Contains(o, f.want) || !strings.Contains(o, "run the same command again") {
		t.Errorf("the error does not name the server %s, JetStream's error (%s) and how to resume:\n%s", url, f.want, o)
	}
	t.Logf("stopped %v after its lease's first failed refresh:\n%s", took.Round(time.Second), tail(o, 2))

	// Mended, the server as it is: not "another coordinator".
	f.unspoil(srv)
	again := start(t, nil, "coordinator", args...)
	err = again.wait(t, 3*time.Minute)
	switch code := exitCode(err); {
	case code == 0:
		t.Logf("the server stored again without a restart; the job completed")
		sameResults(t, ref, out)
		return
	case code == 1 && strings.Contains(again.output(), "127.0.0.1:"+port) && strings.Contains(again.output(), f.again):
		t.Logf("mended, the server not restarted, the same command:\n%s", tail(again.output(), 2))
	default:
		t.Fatalf("the same command, the store mended: exit %d, want 1 naming the server %s and saying %q (5 is another coordinator, and none runs):\n%s", code, url, f.again, again.output())
	}

	// Restarted, the server stores again: the job resumes and completes.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.wait(t, 30*time.Second)
	startServer()
	third := start(t, nil, "coordinator", args...)
	if err := third.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("the same command after the server restarted: %v\n%s", err, third.output())
	}
	if !strings.Contains(third.output(), "resumed=true") {
		t.Errorf("the job did not resume:\n%s", third.output())
	}
	sameResults(t, ref, out)
}

// buildNATSServer builds the nats-server command of the version neardup
// embeds (from the module cache) and returns its path.
func buildNATSServer(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "nats-server")
	out, err := exec.Command("go", "build", "-o", exe, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	return exe
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
