package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/queue"
)

// jsNode is one server of a JetStream cluster on loopback: its options
// (name, client and cluster ports, store) outlive the server, so that it
// can be started again as the same server.
type jsNode struct {
	name                    string
	clientPort, clusterPort int
	store                   string
	srv                     *server.Server
}

// url is the node's client URL.
func (n *jsNode) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.clientPort) }

// start starts the node's server, routed to every node of the cluster.
func (n *jsNode) start(t *testing.T, cluster []*jsNode) {
	t.Helper()
	var routes []string
	for _, o := range cluster {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", o.clusterPort))
	}
	opts := &server.Options{
		ServerName: n.name,
		Host:       "127.0.0.1",
		Port:       n.clientPort,
		JetStream:  true,
		StoreDir:   n.store,
		Cluster:    server.ClusterOpts{Name: "neardup-test", Host: "127.0.0.1", Port: n.clusterPort},
		Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		NoSigs:     true,
		NoLog:      true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		t.Fatalf("%s not ready", n.name)
	}
	n.srv = srv
}

// stop shuts the node's server down and waits for it.
func (n *jsNode) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

// startJSCluster starts a JetStream cluster of size servers on loopback and
// waits until it has elected a meta leader that sees every server.
func startJSCluster(t *testing.T, size int) []*jsNode {
	t.Helper()
	nodes := make([]*jsNode, size)
	for i := range nodes {
		nodes[i] = &jsNode{name: fmt.Sprintf("n%d", i+1), clientPort: freePort(t), clusterPort: freePort(t), store: t.TempDir()}
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	for _, n := range nodes {
		n.start(t, nodes)
	}
	waitUntil(t, 30*time.Second, "a JetStream meta leader that sees every server", func() bool {
		for _, n := range nodes {
			if n.srv.JetStreamIsLeader() && len(n.srv.JetStreamClusterPeers()) == size {
				return true
			}
		}
		return false
	})
	return nodes
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
	}
}

// clients lists the names of the clients connected to each running node.
func clients(t *testing.T, nodes []*jsNode) string {
	t.Helper()
	var b strings.Builder
	for _, n := range nodes {
		if n.srv == nil {
			continue
		}
		cz, err := n.srv.Connz(&server.ConnzOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range cz.Conns {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, " %s: %v", n.name, names)
	}
	return b.String()
}

// TestJetStreamCluster runs a job on a cluster of three NATS servers with
// --replicas 3: three workers list the servers' URLs in different orders,
// the coordinator lists them all (a client picks a server of its list at
// random; the test logs where each one is). Early in the map stage the
// server that leads the task stream is shut down; the map stage must still
// complete without it, on the two servers left. Then that server is
// started again on the same ports and store, and rejoins while the reduce
// stage runs; the job completes byte-identical to an undisturbed run, and
// the restarted server is a current replica of the task stream again.
//
// With --replicas 1 the test fails: the task stream lives only on the
// server that is shut down, so no map task completes until it returns.
func TestJetStreamCluster(t *testing.T) {
	in, ref := corpusAndReference(t)
	nodes := startJSCluster(t, 3)
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.url())
	}
	common := []string{"--replicas", "3", "--ack-wait", "2s"}
	// Slow tasks keep the job running through the outage.
	slow := []string{faults.EnvVar + "=slow@map/*;slow@reduce/*"}
	for i := range nodes {
		order := append(slices.Clone(urls[i:]), urls[:i]...)
		w := start(t, slow, "worker", append([]string{"--nats", strings.Join(order, ","), "--slots", "1"}, common...)...)
		w.waitFor(t, "worker ready", 60*time.Second)
	}
	out := filepath.Join(t.TempDir(), "out")
	coord := start(t, nil, "coordinator", append(append([]string{"--out", out, "--nats", strings.Join(urls, ","),
		"--chunk-bytes", "200000", "--partitions", "4"}, common...), in)...)
	coord.waitFor(t, "job planned", 60*time.Second)
	m := regexp.MustCompile(`chunks=(\d+)`).FindStringSubmatch(coord.output())
	if m == nil {
		t.Fatalf("the plan does not say how many map tasks:\n%s", coord.output())
	}
	mapDone := fmt.Sprintf("map     %s/%s tasks", m[1], m[1]) // the map stage's last progress line

	var victim *jsNode
	waitUntil(t, 30*time.Second, "leader of the task stream", func() bool {
		for _, n := range nodes {
			if n.srv.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, queue.StreamName) {
				victim = n
				return true
			}
		}
		return false
	})
	t.Logf("clients:%s; shutting down %s, the leader of %s", clients(t, nodes), victim.name, queue.StreamName)
	victim.stop()
	down := time.Now()
	if strings.Contains(coord.output(), mapDone) {
		t.Fatalf("the map stage ended before the shutdown; the test proves nothing:\n%s", coord.output())
	}

	coord.waitFor(t, mapDone, 90*time.Second)
	t.Logf("map stage done %v after the shutdown; clients:%s", time.Since(down).Round(time.Second), clients(t, nodes))
	victim.start(t, nodes)

	if err := coord.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
	sameResults(t, ref, out)
	waitUntil(t, 30*time.Second, "current replica of the task stream on the restarted "+victim.name, func() bool {
		return victim.srv.JetStreamIsStreamCurrent(server.DEFAULT_GLOBAL_ACCOUNT, queue.StreamName)
	})
}
