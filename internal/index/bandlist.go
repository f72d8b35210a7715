package index

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// BandList is one sorted list of band records of a partition, named by
// where it was read.
type BandList struct {
	Name string
	Recs []records.BandRecord
}

// ReadPartFiles reads the band files of a partition in the layout before
// band run files (version 2 indexes): each chunk's file in the partition
// and its later runs.
func ReadPartFiles(ctx context.Context, st storage.FS, part int, maps []job.MapResult) ([]BandList, error) {
	var lists []BandList
	for _, mr := range maps {
		var files []fileinfo.Info
		if mr.BandRuns != nil {
			runs, err := ReadBandRuns(ctx, st, *mr.BandRuns)
			if err != nil {
				return nil, err
			}
			files = runs[part]
		}
		if info, ok := mr.BandFiles[part]; ok {
			files = append([]fileinfo.Info{info}, files...)
		}
		for _, info := range files {
			recs, err := ReadBandFile(ctx, st, info)
			if err != nil {
				return nil, err
			}
			lists = append(lists, BandList{Name: info.Name, Recs: recs})
		}
	}
	return lists, nil
}

// ReadBandRuns reads the list of a chunk's later band runs (an index's
// PartEntry.Runs), checked against what its writer recorded: the
// files of its runs after the first, by partition.
func ReadBandRuns(ctx context.Context, st storage.Opener, info fileinfo.Info) (map[int][]fileinfo.Info, error) {
	data, err := storage.ReadFile(ctx, st, info.Name)
	if err != nil {
		return nil, err
	}
	if sum := xxhash.Sum64(data); sum != info.Checksum || int64(len(data)) != info.Bytes {
		return nil, fmt.Errorf("%s: checksum %x (%d bytes), want %x (%d bytes): %w", info.Name, sum, len(data), info.Checksum, info.Bytes, workfile.ErrCorrupt)
	}
	var runs map[int][]fileinfo.Info
	if err := json.Unmarshal(data, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	for _, list := range runs {
		for i := range list { // an earlier job's file names its runs in its own output
			list[i].Name = storage.InMountOf(info.Name, list[i].Name)
		}
	}
	return runs, nil
}

// BandOptions are the options of every bands/ file.
func BandOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"band", "key", "doc"}, Raw: true}
}

// BandsOptions are the options of every bands/ file.
func BandsOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"part", "band", "key", "doc"}}
}

// EarlierBands reads the band records of the earlier jobs a job is
// matched against, by partition, in either layout of their indexes.
type EarlierBands struct {
	jobs []*Index
}

// LoadEarlierBands reads the index descriptions of the n earlier jobs,
// through their mounts.
func LoadEarlierBands(ctx context.Context, st storage.Opener, n int) (*EarlierBands, error) {
	jobs, err := LoadEarlier(ctx, st, n)
	if err != nil {
		return nil, err
	}
	return &EarlierBands{jobs: jobs}, nil
}

// LoadEarlier reads the index descriptions of the n earlier jobs a job
// is matched against (--against), through their mounts (job.Mount).
func LoadEarlier(ctx context.Context, st storage.Opener, n int) ([]*Index, error) {
	var out []*Index
	for i := range n {
		var ix Index
		if err := storage.ReadJSON(ctx, st, job.InMount(i, job.IndexFile), &ix); err != nil {
			return nil, fmt.Errorf("earlier job %d (--against): %w", i, err)
		}
		out = append(out, &ix)
	}
	return out, nil
}

// Read returns the earlier jobs' sorted lists of partition part.
func (e *EarlierBands) Read(ctx context.Context, st storage.FS, part int) ([]BandList, error) {
	var lists []BandList
	for i, ix := range e.jobs {
		if ix.BandsLayout != BandsLayoutTasks {
			var in []PartInput
			if err := storage.ReadJSON(ctx, st, job.InMount(i, job.TaskInputFile(job.InputsReduce, part)), &in); err != nil {
				return nil, fmt.Errorf("earlier job %d (--against): %w", i, err)
			}
			for j := range in {
				if in[j].File != nil {
					in[j].File.Name = job.InMount(i, in[j].File.Name)
				}
				if in[j].Runs != nil {
					in[j].Runs.Name = job.InMount(i, in[j].Runs.Name)
				}
			}
			l, err := ReadPartFiles(ctx, st, part, PartMapResults(in, part))
			if err != nil {
				return nil, err
			}
			lists = append(lists, l...)
			continue
		}
		for _, f := range BandFilesOf(ix.BandFiles, part) {
			info := f.File
			info.Name = job.InMount(i, info.Name)
			recs, err := ReadBandPart(ctx, st, info, part)
			if err != nil {
				return nil, err
			}
			lists = append(lists, BandList{Name: info.Name, Recs: recs})
		}
	}
	return lists, nil
}

// bandInput is a chunk's entry in the list of a partition of a version 2
// index: its band file in the partition and the side file of its later
// runs.
type PartInput = PartEntry

// mapResults turns the entries of a partition of a version 2 index back
// into the map results reduce.Reduce reads.
func PartMapResults(in []PartInput, part int) []job.MapResult {
	out := make([]job.MapResult, len(in))
	for i, b := range in {
		out[i] = job.MapResult{Chunk: b.Chunk, BandRuns: b.Runs}
		if b.File != nil {
			out[i].BandFiles = map[int]fileinfo.Info{part: *b.File}
		}
	}
	return out
}
