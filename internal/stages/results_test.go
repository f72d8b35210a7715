package stages

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestResultsNameFilesOnce runs a job of several chunks and partitions,
// gathered, and clustered in steps of tasks, and checks that no task's
// result names a file twice: a reduce, gather or cluster task reports
// the route table of its rows for each chunk or partition, not a range
// of its file for each (partitions × chunks of them in all, which the
// coordinator would hold at once: 2 GB at 2,300 chunks × 4,096
// partitions; see BenchmarkControlPlane).
func TestResultsNameFilesOnce(t *testing.T) {
	r := spreadCase(t).run(t)
	if len(r.plan.Chunks) < 4 || len(r.pairs) == 0 || r.outcomes["gather"] == nil || r.outcomes["cluster-contract"] == nil {
		t.Fatalf("%d chunks, %d pairs, stages %v: want several chunks with pairs, gathered and clustered in steps",
			len(r.plan.Chunks), len(r.pairs), slices.Sorted(maps.Keys(r.outcomes)))
	}
	name := regexp.MustCompile(`"name":"([^"]*)"`)
	checked := 0
	for stageName, out := range r.outcomes {
		for _, i := range out.Done {
			data, err := out.Results.Result(context.Background(), i)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, m := range name.FindAllStringSubmatch(string(data), -1) {
				if seen[m[1]] {
					t.Errorf("%s task %d names %s more than once: %s", stageName, i, m[1], truncate(data))
					break
				}
				seen[m[1]] = true
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no result checked")
	}
}

// spreadCase is a job of four families of three near-copies, their
// members in different chunks of two documents, over four partitions,
// gathered, and clustered in steps of tasks.
func spreadCase(t *testing.T) *stageCase {
	t.Helper()
	p := job.DefaultParams()
	p.Partitions, p.Bands, p.Rows, p.Gather = 4, 32, 4, job.GatherOn
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	bases := []string{
		"Morning fog rolled across the harbor while fishermen mended nets beside weathered boats and gulls circled above quiet stone piers",
		"Three silver bicycles leaned against a crumbling brick wall beside the river where children fed ducks every sunny afternoon in spring",
		"The old library kept its rarest maps in a cold basement room that only the head archivist could open with a brass key",
		"A sudden storm knocked out power across the valley so families lit candles and told stories until the lights flickered back on",
	}
	var docs []caseDoc
	for copyNo, extra := range []string{"", " again", " today"} {
		for f, base := range bases {
			docs = append(docs, caseDoc{id: fmt.Sprintf("f%d-%d", f, copyNo), text: base + extra})
		}
	}
	return &stageCase{name: "spread", params: p, docsPerChunk: 2, docs: docs, wholeBytes: -1}
}

// truncate is the start of a result, for an error message.
func truncate(data []byte) string {
	s := string(data)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
