package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dockerd is a Docker daemon the test started for itself: its own socket,
// data root and exec root in a temporary directory, no iptables rules, no
// docker0 bridge and no change to the host's IP forwarding (containers
// reach each other on their compose network, and the host reaches their
// published ports through docker-proxy), so that it touches nothing of the
// host's and leaves nothing behind.
type dockerd struct {
	dir  string // the temporary directory of everything it keeps
	host string // DOCKER_HOST
	cmd  *exec.Cmd
	log  *os.File
}

// startDockerd starts a dockerd, or skips the test (fails it in CI) where
// none can run: no dockerd or docker command, not root, or a daemon that
// does not answer within a minute (its log is shown). Its cleanup removes
// every container, network and volume left, stops it by its PID, and
// removes its directory.
func startDockerd(t *testing.T) *dockerd {
	t.Helper()
	for _, tool := range []string{"dockerd", "docker", "containerd", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, fmt.Sprintf("%s not found (apt-get install docker.io docker-compose): %v", tool, err))
		}
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "dockerd needs root")
	}
	// A short path: containerd's sockets live under the exec root, and a
	// socket's path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "nd-docker-")
	if err != nil {
		t.Fatal(err)
	}
	d := &dockerd{dir: dir, host: "unix://" + filepath.Join(dir, "docker.sock")}
	if d.log, err = os.Create(filepath.Join(dir, "dockerd.log")); err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command("dockerd",
		"--host", d.host,
		"--data-root", filepath.Join(dir, "root"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none")
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	// Its own process group: a ^C to the test is not a signal to it; the
	// cleanup stops it.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		skipOrFail(t, fmt.Sprintf("dockerd: %v", err))
	}
	exited := make(chan error, 1)
	go func() { exited <- d.cmd.Wait() }()
	t.Cleanup(func() { d.stop(t, exited) })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := d.command("version").Run(); err == nil {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			skipOrFail(t, fmt.Sprintf("dockerd cannot run here (exited: %v):\n%s", err, d.logTail()))
		default:
		}
		if time.Now().After(deadline) {
			skipOrFail(t, "dockerd does not answer after a minute:\n"+d.logTail())
		}
	}
	t.Logf("dockerd %d on %s", d.cmd.Process.Pid, d.host)
	return d
}

// logTail is the end of the daemon's log.
func (d *dockerd) logTail() string {
	b, _ := os.ReadFile(d.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// command is a docker command for this daemon.
func (d *dockerd) command(args ...string) *exec.Cmd {
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+d.host, "DOCKER_CONFIG="+filepath.Join(d.dir, "client"))
	return cmd
}

// docker runs a docker command and returns its output, failing the test
// on error.
func (d *dockerd) docker(t *testing.T, args ...string) string {
	t.Helper()
	return output(t, d.command(args...))
}

// output runs cmd and returns its output, failing the test on error.
func output(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

// stop removes every container, network and volume of the daemon, stops
// it (SIGTERM by its PID, SIGKILL after a minute, and then its containerd
// and the shims under its exec root), unmounts what it left mounted,
// deletes the bridges of its networks if they outlived it, and removes its
// directory. Whatever fails is reported, and the rest still done.
func (d *dockerd) stop(t *testing.T, exited chan error) {
	clean := func(args ...string) string {
		out, err := d.command(args...).CombinedOutput()
		if err != nil {
			t.Errorf("cleanup: docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	running := true
	select {
	case err := <-exited:
		exited <- err
		running = false
	default:
	}
	var networks []string
	if running {
		if ids := strings.Fields(clean("ps", "-aq")); len(ids) > 0 {
			clean(append([]string{"rm", "-f", "-v"}, ids...)...)
		}
		for _, id := range strings.Fields(clean("network", "ls", "-q", "--no-trunc", "--filter", "type=custom")) {
			networks = append(networks, id)
			clean("network", "rm", id)
		}
		if ids := strings.Fields(clean("volume", "ls", "-q")); len(ids) > 0 {
			clean(append([]string{"volume", "rm", "-f"}, ids...)...)
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Errorf("cleanup: dockerd %d still running a minute after SIGTERM: killed", d.cmd.Process.Pid)
			d.cmd.Process.Kill()
			<-exited
		}
	}
	// Its containerd and shims, if they outlive it (they do when it is
	// killed).
	for deadline := time.Now().Add(10 * time.Second); len(d.orphans()) > 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	for _, pid := range d.orphans() {
		t.Errorf("cleanup: process %d of the test's dockerd outlived it: killed", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, m := range mountsUnder(d.dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmount %s: %v", m, err)
		}
	}
	for _, id := range networks {
		if _, err := net.InterfaceByName("br-" + id[:12]); err == nil {
			t.Errorf("cleanup: the bridge br-%s outlived dockerd: deleted", id[:12])
			exec.Command("ip", "link", "del", "br-"+id[:12]).Run()
		}
	}
	d.log.Close()
	if t.Failed() {
		t.Logf("dockerd's log ends:\n%s", d.logTail())
	}
	if err := os.RemoveAll(d.dir); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// orphans lists the processes whose command line names the daemon's
// directory: its containerd and container shims.
func (d *dockerd) orphans() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(d.dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mountsUnder lists the mount points under dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Field 5 is the mount point, with spaces escaped as \040.
		if f := strings.Fields(sc.Text()); len(f) > 4 {
			m := strings.ReplaceAll(f[4], `\040`, " ")
			if strings.HasPrefix(m, dir+"/") {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// waitExit waits for container id to exit and returns its exit code,
// failing the test after d.
func (d *dockerd) waitExit(t *testing.T, id string, timeout time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := d.command("wait", id)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("docker wait %s: %v\n%s", id, err, out.String())
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		t.Fatalf("container %s still running after %v:\n%s", id, timeout, d.logs(id))
	}
	code, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("docker wait %s: %q", id, out.String())
	}
	return code
}

// logs is the output of container id (or why there is none).
func (d *dockerd) logs(id string) string {
	out, err := d.command("logs", id).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(docker logs %s: %v: %s)", id, err, out)
	}
	return string(out)
}
