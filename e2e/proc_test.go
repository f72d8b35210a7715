package e2e

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// proc is a running command whose output is kept and watched.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	seen []chan struct{}
	pats []string
	done chan error
}

// start runs a built command with extra environment variables.
func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	return startCmd(t, command(name, args...), append(os.Environ(), env...))
}

// startCmd runs cmd with exactly the environment env.
func startCmd(t *testing.T, cmd *exec.Cmd, env []string) *proc {
	t.Helper()
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	p.cmd.Env = env
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			for i, pat := range p.pats {
				if p.seen[i] != nil && strings.Contains(line, pat) {
					close(p.seen[i])
					p.seen[i] = nil
				}
			}
			p.mu.Unlock()
		}
	}()
	go func() {
		err := p.cmd.Wait()
		w.Close()
		p.done <- err
	}()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// watch returns a channel closed when a line containing pat appears.
func (p *proc) watch(pat string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(p.out.String(), pat) {
		close(ch)
		return ch
	}
	p.pats = append(p.pats, pat)
	p.seen = append(p.seen, ch)
	return ch
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits for a line containing pat, failing the test after d.
func (p *proc) waitFor(t *testing.T, pat string, d time.Duration) {
	t.Helper()
	select {
	case <-p.watch(pat):
	case err := <-p.done:
		p.done <- err
		t.Fatalf("process exited (%v) before printing %q:\n%s", err, pat, p.output())
	case <-time.After(d):
		t.Fatalf("no %q within %v:\n%s", pat, d, p.output())
	}
}

// wait waits for the process to exit, failing the test after d.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("process still running after %v:\n%s", d, p.output())
		return nil
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
