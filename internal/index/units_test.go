package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// TestChooseUnitTables checks which earlier unit tables a job counts and
// which earlier jobs it names as not counted, with why.
func TestChooseUnitTables(t *testing.T) {
	table := func(unit string, parts int, jobs ...string) *UnitTable {
		u := &UnitTable{Unit: unit, Partitions: parts, Files: []BandFile{{File: fileinfo.Info{Name: job.UnitTableFile(0, parts-1)}, Last: parts - 1}}}
		for i, j := range jobs {
			u.Jobs = append(u.Jobs, job.Against{Job: j, FirstChunk: 10 * i, Chunks: 10})
		}
		return u
	}
	ix := func(name string, u *UnitTable) *Index { return &Index{Job: name, Units: u} }
	compacted := ix("weeks", table("line", 4, "w1"))
	compacted.Compacted = []job.Against{{Job: "w1"}, {Job: "w2"}}
	compacted.Units.NotCounted = []job.UnitsNotCounted{{Job: "w2", Reason: "its index has no unit table (...)"}}
	tests := []struct {
		name       string
		ixs        []*Index
		tables     []int // the mounts of the tables counted
		counted    []string
		notCounted []string // "job: a part of its reason"
	}{
		{"no table", []*Index{ix("w1", nil)}, nil, nil, []string{"w1: has no unit table"}},
		{"merged supersedes its own", []*Index{ix("w1", table("line", 4, "w1")), ix("w2", table("line", 4, "w1", "w2"))},
			[]int{1}, []string{"w1", "w2"}, nil},
		{"disjoint", []*Index{ix("w1", table("line", 4, "w1")), ix("w2", table("line", 4, "w2"))},
			[]int{0, 1}, []string{"w1", "w2"}, nil},
		{"a week without", []*Index{ix("w1", table("line", 4, "w1")), ix("w2", nil), ix("w3", table("line", 4, "w1", "w3"))},
			[]int{2}, []string{"w1", "w3"}, []string{"w2: has no unit table"}},
		{"other units", []*Index{ix("w1", table("paragraph", 4, "w1"))}, nil, nil, []string{"w1: of kind paragraph, this job's are line"}},
		{"other partitions", []*Index{ix("w1", table("line", 8, "w1"))}, nil, nil, []string{"w1: cut into 8 partitions, this job's units into 4"}},
		{"overlap", []*Index{ix("w2", table("line", 4, "w1", "w2")), ix("w3", table("line", 4, "w1", "w3"))},
			[]int{0}, []string{"w1", "w2"}, []string{"w3: another table counted counts too (w1, w3)"}},
		{"compacted without one of its jobs", []*Index{compacted}, []int{0}, []string{"w1"},
			[]string{"w2: does not count it (its index has no unit table (...))"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ChooseUnitTables(tc.ixs, "line", 4)
			var tables []int
			for _, files := range c.Sources.Tables {
				var m int
				if _, err := fmt.Sscanf(files[0].File.Name, "@against-%d/", &m); err != nil || files[0].File.Name != job.InMount(m, job.UnitTableFile(0, 3)) {
					t.Fatalf("a table's file %q is not in a mount", files[0].File.Name)
				}
				tables = append(tables, m)
			}
			var counted []string
			for _, a := range c.Counted {
				counted = append(counted, a.Job)
			}
			if !slices.Equal(tables, tc.tables) || !slices.Equal(counted, tc.counted) || c.Sources.Partitions != 4 {
				t.Errorf("tables of mounts %v counting %v (%d partitions), want %v counting %v", tables, counted, c.Sources.Partitions, tc.tables, tc.counted)
			}
			if len(c.NotCounted) != len(tc.notCounted) {
				t.Fatalf("not counted %+v, want %q", c.NotCounted, tc.notCounted)
			}
			for i, w := range tc.notCounted {
				name, reason, _ := strings.Cut(w, ": ")
				if got := c.NotCounted[i]; got.Job != name || !strings.Contains(got.Reason, reason) {
					t.Errorf("not counted %+v, want %s for %q", got, name, reason)
				}
			}
		})
	}
}

// writeUnits writes rows as a unit table file of partitions first to
// last of parts, a row group a partition.
func writeUnits(t *testing.T, st storage.FS, name string, parts int, rows []records.Unit) BandFile {
	t.Helper()
	bf, _, err := writeParts(context.Background(), st, name, UnitOptions(), 0, parts-1, func(part int) ([]records.Unit, error) {
		var out []records.Unit
		for _, r := range rows {
			if int(r.Part) == part {
				out = append(out, r)
			}
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bf
}

// TestReadUnitPart checks the reading of unit table files: a partition's
// rows, two tables merged (holders summed, the least first document), and
// files that do not hold together refused, naming the file, the
// partition and the row.
func TestReadUnitPart(t *testing.T) {
	ctx := context.Background()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := writeUnits(t, st, "a.parquet", 3, []records.Unit{{Part: 0, UnitHash: 3, Holders: 2, FirstDoc: 7}, {Part: 0, UnitHash: 6, Holders: 1, FirstDoc: 9},
		{Part: 1, UnitHash: -3, Holders: 1, FirstDoc: 4}, {Part: 1, UnitHash: 4, Holders: 5, FirstDoc: 1}})
	b := writeUnits(t, st, "b.parquet", 3, []records.Unit{{Part: 1, UnitHash: 1, Holders: 1, FirstDoc: 20}, {Part: 1, UnitHash: 4, Holders: 2, FirstDoc: 0}})
	rows, err := ReadUnitPart(ctx, st, a.File, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []records.Unit{{Part: 1, UnitHash: -3, Holders: 1, FirstDoc: 4}, {Part: 1, UnitHash: 4, Holders: 5, FirstDoc: 1}}; !slices.Equal(rows, want) {
		t.Errorf("partition 1: %+v, want %+v", rows, want)
	}
	merged, err := UnitSources{Partitions: 3, Tables: [][]BandFile{{a}, {b}}}.Read(ctx, st, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []records.Unit{{Part: 1, UnitHash: -3, Holders: 1, FirstDoc: 4}, {Part: 1, UnitHash: 1, Holders: 1, FirstDoc: 20},
		{Part: 1, UnitHash: 4, Holders: 7, FirstDoc: 0}}; !slices.Equal(merged, want) {
		t.Errorf("merged: %+v, want %+v", merged, want)
	}

	for _, tc := range []struct {
		name string
		rows []records.Unit
		want string
	}{
		{"unsorted", []records.Unit{{Part: 1, UnitHash: 4, Holders: 1}, {Part: 1, UnitHash: 1, Holders: 1}}, "partition 1, row 1: unit hash 1 after 4"},
		{"repeated", []records.Unit{{Part: 1, UnitHash: 4, Holders: 1}, {Part: 1, UnitHash: 4, Holders: 1}}, "partition 1, row 1: unit hash 4 after 4"},
		{"other partition", []records.Unit{{Part: 1, UnitHash: 4, Holders: 1}, {Part: 1, UnitHash: 5, Holders: 1}}, "partition 1, row 1: unit hash 5 is of partition 2"},
		{"no holder", []records.Unit{{Part: 1, UnitHash: 4, Holders: 0}}, "partition 1, row 0: unit hash 4 held by 0 documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeUnits(t, st, tc.name+".parquet", 3, tc.rows)
			_, err := ReadUnitPart(ctx, st, bad.File, 1, 3)
			if !errors.Is(err, pqfile.ErrCorrupt) || !strings.Contains(err.Error(), tc.name+".parquet: "+tc.want) {
				t.Errorf("got %v, want ErrCorrupt naming %s and %q", err, tc.name+".parquet", tc.want)
			}
		})
	}
	t.Run("size", func(t *testing.T) {
		info := a.File
		info.Bytes--
		if _, err := ReadUnitPart(ctx, st, info, 1, 3); !errors.Is(err, pqfile.ErrCorrupt) || !strings.Contains(err.Error(), "a.parquet") {
			t.Errorf("a file of another size than recorded: %v", err)
		}
	})
}
