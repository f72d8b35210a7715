package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
)

// UnitTable describes an index's unit table (--paragraphs with
// --index): a row (records.Unit) for every distinct unit hash of the
// documents of the jobs it counts, with how many of those documents hold
// it and the first of them. A job matched against earlier ones merges
// their tables into its own (see ChooseUnitTables), so the table of a
// series' last job counts every job before it whose index had one.
type UnitTable struct {
	// Unit is the kind of unit (--paragraph-unit): line or paragraph.
	Unit string `json:"unit"`
	// Partitions is the number of partitions its rows are cut into
	// (unit hash mod Partitions, as the job's band keys).
	Partitions int `json:"partitions"`
	// Files are its files (job.UnitTableFile), by partition range,
	// ascending: rows sorted by (part, unit_hash), a row group (or more)
	// per partition.
	Files []BandFile `json:"files"`
	// Units counts its rows.
	Units int64 `json:"units"`
	// Jobs are the jobs whose documents it counts, each with its chunk
	// range (the job of a first_doc is the one whose range holds its
	// chunk), by first chunk.
	Jobs []job.Against `json:"jobs"`
	// NotCounted are the earlier jobs the job was matched against whose
	// units it does not count, and why.
	NotCounted []job.UnitsNotCounted `json:"not_counted,omitempty"`
}

// jobNames are the names of the jobs t counts.
func (t *UnitTable) jobNames() []string {
	names := make([]string, len(t.Jobs))
	for i, a := range t.Jobs {
		names[i] = a.Job
	}
	return names
}

// UnitOptions are the options of every unit table file.
func UnitOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"part", "unit_hash"}}
}

// ReadUnitPart reads the rows of partition part from a unit table file
// of a table cut into partitions partitions: its row groups of the
// partition alone, checked as LookupBands checks a band file (its size
// and row count), and each row against the table's order: unit hashes
// strictly ascending, each of the partition, held by one document or
// more. A row out of order fails, naming the file, the partition and the
// row.
func ReadUnitPart(ctx context.Context, st storage.Opener, info fileinfo.Info, part, partitions int) ([]records.Unit, error) {
	rows, err := readPart(ctx, st, info, part, func(rows []records.Unit) []bandColumn {
		return []bandColumn{
			{"unit_hash", func(i int, v int64) { rows[i].UnitHash = v }},
			{"holders", func(i int, v int64) { rows[i].Holders = v }},
			{"first_doc", func(i int, v int64) { rows[i].FirstDoc = v }},
		}
	})
	if err != nil {
		return nil, err
	}
	for i := range rows {
		r := &rows[i]
		r.Part = int32(part)
		switch {
		case i > 0 && r.UnitHash <= rows[i-1].UnitHash:
			return nil, fmt.Errorf("%s: partition %d, row %d: unit hash %d after %d, not ascending: %w", info.Name, part, i, r.UnitHash, rows[i-1].UnitHash, pqfile.ErrCorrupt)
		case bands.Partition(uint64(r.UnitHash), partitions) != part:
			return nil, fmt.Errorf("%s: partition %d, row %d: unit hash %d is of partition %d: %w", info.Name, part, i, r.UnitHash, bands.Partition(uint64(r.UnitHash), partitions), pqfile.ErrCorrupt)
		case r.Holders < 1:
			return nil, fmt.Errorf("%s: partition %d, row %d: unit hash %d held by %d documents: %w", info.Name, part, i, r.UnitHash, r.Holders, pqfile.ErrCorrupt)
		}
	}
	return rows, nil
}

// UnitSources are the unit tables a job (or a compaction) counts, each
// its files named as the reader sees them (an earlier job's through its
// mount), counting disjoint sets of jobs.
type UnitSources struct {
	Partitions int          `json:"partitions"`
	Tables     [][]BandFile `json:"tables"`
}

// Read returns the rows of partition part of every table, merged into
// one row a unit hash, sorted by it: a unit in several tables has the
// sum of their holders (their jobs are disjoint) and the least of their
// first documents. Memory is the partition's rows of every table.
func (u UnitSources) Read(ctx context.Context, st storage.Opener, part int) ([]records.Unit, error) {
	var all []records.Unit
	for _, files := range u.Tables {
		for _, f := range BandFilesOf(files, part) {
			rows, err := ReadUnitPart(ctx, st, f.File, part, u.Partitions)
			if err != nil {
				return nil, err
			}
			all = append(all, rows...)
		}
	}
	if len(u.Tables) > 1 {
		slices.SortFunc(all, func(a, b records.Unit) int { return cmp.Compare(a.UnitHash, b.UnitHash) })
	}
	out := all[:0]
	for _, r := range all {
		if n := len(out); n > 0 && out[n-1].UnitHash == r.UnitHash {
			out[n-1].Holders += r.Holders
			out[n-1].FirstDoc = min(out[n-1].FirstDoc, r.FirstDoc)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Bytes is the size of every file of the tables.
func (u UnitSources) Bytes() int64 {
	var n int64
	for _, files := range u.Tables {
		for _, f := range files {
			n += f.File.Bytes
		}
	}
	return n
}

// UnitChoice is which of the earlier indexes' unit tables a job counts.
type UnitChoice struct {
	// Sources are the tables counted, their files through the indexes'
	// mounts (job.Mount).
	Sources UnitSources
	// Counted are the jobs whose documents they count, by first chunk:
	// the jobs given and those whose tables theirs merged.
	Counted []job.Against
	// NotCounted are the jobs the indexes hold whose units no table
	// counted counts, and why.
	NotCounted []job.UnitsNotCounted
}

// ChooseUnitTables chooses, of the indexes ixs (mounted at job.Mount(i)),
// the unit tables a job cutting units of kind unit into partitions
// counts. Each table counts a set of jobs: its own job's and those it
// merged; one job's documents must be counted once. The tables are taken
// by the most jobs counted first (then in the order given): a table whose
// jobs are all counted already adds nothing; one whose jobs are none of
// them is counted; one that shares some (two jobs each merged a third,
// neither the other) is not. Every job an index holds (itself, or the
// jobs a compacted index holds) that no table counted counts is named in
// NotCounted with the reason: its index has no unit table (it ran without
// --paragraphs or --index, or before unit tables), one of other units or
// partitions, a table that overlaps another, or one that does not count
// it.
func ChooseUnitTables(ixs []*Index, unit string, partitions int) UnitChoice {
	c := UnitChoice{Sources: UnitSources{Partitions: partitions}}
	why := make([]string, len(ixs)) // why index i's table is not counted, "" if it is or adds nothing
	var usable []int
	for i, ix := range ixs {
		switch t := ix.Units; {
		case t == nil:
			why[i] = "its index has no unit table (its job ran without --paragraphs or --index, or by a build before unit tables)"
		case t.Unit != unit:
			why[i] = fmt.Sprintf("its index's unit table counts units of kind %s, this job's are %s", t.Unit, unit)
		case t.Partitions != partitions:
			why[i] = fmt.Sprintf("its index's unit table is cut into %d partitions, this job's units into %d", t.Partitions, partitions)
		default:
			usable = append(usable, i)
		}
	}
	slices.SortStableFunc(usable, func(a, b int) int { return cmp.Compare(len(ixs[b].Units.Jobs), len(ixs[a].Units.Jobs)) })
	counted := map[string]bool{}
	for _, i := range usable {
		t := ixs[i].Units
		names := t.jobNames()
		n := 0
		for _, name := range names {
			if counted[name] {
				n++
			}
		}
		switch n {
		case len(names): // counted already
		case 0:
			for _, a := range t.Jobs {
				counted[a.Job] = true
				c.Counted = append(c.Counted, a)
			}
			files := slices.Clone(t.Files)
			for k := range files {
				files[k].File.Name = job.InMount(i, files[k].File.Name)
			}
			c.Sources.Tables = append(c.Sources.Tables, files)
		default:
			why[i] = fmt.Sprintf("its index's unit table counts jobs that another table counted counts too (%s): run each job of a series against all earlier ones", strings.Join(names, ", "))
		}
	}
	slices.SortStableFunc(c.Counted, func(a, b job.Against) int { return cmp.Compare(a.FirstChunk, b.FirstChunk) })
	noted := map[string]bool{}
	for i, ix := range ixs {
		for _, name := range heldJobs(ix) {
			if counted[name] || noted[name] {
				continue
			}
			noted[name] = true
			reason := why[i]
			if reason == "" {
				reason = "its index's unit table does not count it"
				if t := ix.Units; t != nil {
					for _, nc := range t.NotCounted {
						if nc.Job == name {
							reason += " (" + nc.Reason + ")"
						}
					}
				}
			}
			c.NotCounted = append(c.NotCounted, job.UnitsNotCounted{Job: name, Reason: reason})
		}
	}
	return c
}

// heldJobs names the jobs whose documents ix holds: those a compacted
// index holds, else its own.
func heldJobs(ix *Index) []string {
	if len(ix.Compacted) == 0 {
		return []string{ix.Job}
	}
	names := make([]string, len(ix.Compacted))
	for i, a := range ix.Compacted {
		names[i] = a.Job
	}
	return names
}
