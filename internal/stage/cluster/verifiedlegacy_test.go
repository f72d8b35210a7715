package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// TestClusterReadsEarlierVerifiedFiles runs the cluster stage on verify
// results that name Parquet files, as a build before the verified files
// of their own wrote them (a job it ran through verify, which this build
// resumes), and checks that it writes the same outputs as from this
// build's files, in one task and in steps.
func TestClusterReadsEarlierVerifiedFiles(t *testing.T) {
	ctx := context.Background()
	ref := worktest.NewStore(t)
	verifies, maps := clusterInput(t, ref, rand.New(rand.NewPCG(21, 2)), "random", 1200, 3, false)
	spec := &job.Spec{Params: job.DefaultParams()}
	spec.Params.Partitions = 4
	earlier := copyStore(t, ref)
	legacy := make([]job.VerifyResult, len(verifies))
	converted := 0
	for i, v := range verifies {
		legacy[i] = v
		if v.File != nil {
			var pairs []records.Pair
			err := workfile.ReadVerifiedPairs(ctx, earlier, v.File, func(rows []records.Pair) error {
				pairs = append(pairs, rows...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			legacy[i].File = writeLegacy(t, earlier, v.File.Name, fmt.Sprintf("%s/verified/chunk-%06d.parquet", job.WorkDir, v.Chunk), pairs, "a", "b")
			converted++
		}
		if v.MembersFile != nil {
			var members []records.ExactMember
			if err := workfile.ReadVerifiedMembers(ctx, earlier, v.MembersFile, func(m records.ExactMember) error {
				members = append(members, m)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			legacy[i].MembersFile = writeLegacy(t, earlier, v.MembersFile.Name, fmt.Sprintf("%s/members/chunk-%06d.parquet", job.WorkDir, v.Chunk), members, "group", "doc")
		}
	}
	if converted == 0 {
		t.Fatal("no verified pairs: the case tests nothing")
	}
	for _, whole := range []bool{true, false} {
		want, got := copyStore(t, ref), copyStore(t, earlier)
		wantStats, err := clusterBy(t, ctx, want, spec, verifies, maps, whole)
		if err != nil {
			t.Fatal(err)
		}
		gotStats, err := clusterBy(t, ctx, got, spec, legacy, maps, whole)
		if err != nil {
			t.Fatalf("whole %v: the earlier build's files: %v", whole, err)
		}
		if gotStats.PairsListed != wantStats.PairsListed || gotStats.Clusters != wantStats.Clusters {
			t.Errorf("whole %v: %d pairs, %d clusters from the earlier build's files; want %d, %d",
				whole, gotStats.PairsListed, gotStats.Clusters, wantStats.PairsListed, wantStats.Clusters)
		}
		sameOutputs(t, fmt.Sprintf("whole %v", whole), want, got)
	}
}

// writeLegacy writes rows as a Parquet file at name, as an earlier build's
// verify task did, in place of this build's file at old (removed, so that
// only the Parquet file can be read).
func writeLegacy[T any](t *testing.T, st *storage.Dir, old, name string, rows []T, sortedBy ...string) *fileinfo.Info {
	t.Helper()
	ctx := context.Background()
	info, err := pqfile.Write(ctx, st, name, rows, pqfile.Options{SortedBy: sortedBy})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Remove(ctx, old); err != nil {
		t.Fatal(err)
	}
	return &info
}
