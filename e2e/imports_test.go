package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyQueueImportsNATS reads the import graph with go list: the queue
// package is the only one that imports the NATS client or server, so that
// every other package (the stages, the control plane's policy) can be
// built and tested without them.
func TestOnlyQueueImportsNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/neardup/neardup/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const queuePkg = "github.com/neardup/neardup/internal/queue"
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		seen++
		pkg := fields[0]
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "github.com/nats-io/") && pkg != queuePkg {
				t.Errorf("%s imports %s; only %s may", pkg, imp, queuePkg)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list saw %d packages: the pattern matched too little", seen)
	}
}
