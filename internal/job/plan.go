package job

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// Input is one input file.
type Input struct {
	Path string       `json:"path"`
	Kind formats.Kind `json:"kind"`
	Size int64        `json:"size"`
}

// Chunk is the unit of a map task: a list of pieces of input files.
type Chunk struct {
	Index  int             `json:"index"`
	Pieces []formats.Piece `json:"pieces"`
	Bytes  int64           `json:"bytes"`       // input bytes
	Text   int64           `json:"text_budget"` // estimated text bytes
}

// Plan is the job's inputs and their split into chunks.
type Plan struct {
	Inputs []Input `json:"inputs"`
	Chunks []Chunk `json:"chunks"`
}

// ExpandInputs turns arguments (files, directories, globs) into the list of
// input files, in a stable order: arguments in the order given, the files of
// a directory or glob sorted by path. Within a directory, files whose kind is
// not supported are skipped, and so are files and directories whose names
// start with "_" or "." (markers, work areas and side files, as in Hadoop
// and Spark), and so are such names among a pattern's matches; a file named
// directly must be supported.
//
// An object-store URL (s3://bucket/prefix, gs://, azblob://) names an
// object or, as a directory does, every object under the prefix, filtered
// the same way.
func ExpandInputs(ctx context.Context, args []string) ([]Input, error) {
	var out []Input
	seen := map[string]bool{}
	add := func(path string, explicit bool) error {
		kind, err := formats.DetectKind(path)
		if err != nil {
			if explicit {
				return err
			}
			return nil
		}
		st, err := os.Stat(path)
		if err != nil && explicit {
			return fmt.Errorf("input %s: %w", path, err)
		}
		var size int64
		if err == nil {
			size = st.Size()
		} // else a file in a directory that cannot be read (a broken link): its map task lists it as a reject
		if seen[path] {
			return nil
		}
		seen[path] = true
		out = append(out, Input{Path: path, Kind: kind, Size: size})
		return nil
	}
	for _, arg := range args {
		if storage.IsURL(arg) {
			if l, err := storage.ParseLocation(arg); err != nil {
				return nil, fmt.Errorf("input %s: %w", arg, err)
			} else if !l.Local() {
				objs, err := storage.ListObjects(ctx, arg, hidden)
				if err != nil {
					return nil, fmt.Errorf("input %s: %w", arg, err)
				}
				if len(objs) == 0 {
					return nil, fmt.Errorf("input %s: no objects under this prefix", arg)
				}
				explicit := len(objs) == 1 && objs[0].URL == l.String()
				for _, o := range objs {
					kind, err := formats.DetectKind(o.URL)
					if err != nil {
						if explicit {
							return nil, err
						}
						continue
					}
					if !seen[o.URL] {
						seen[o.URL] = true
						out = append(out, Input{Path: o.URL, Kind: kind, Size: o.Size})
					}
				}
				continue
			} else {
				arg = l.Path
			}
		}
		matches := []string{arg}
		if hasMeta(arg) {
			m, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("input pattern %q: %w", arg, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("input pattern %q matches no file", arg)
			}
			sort.Strings(m)
			// Matches of a pattern are filtered as a directory's entries
			// are (as Hadoop filters glob matches): DIR/* skips DIR/_work.
			matches = slices.DeleteFunc(m, func(p string) bool { return hidden(filepath.Base(p)) })
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", m, err)
			}
			if !st.IsDir() {
				if err := add(m, !hasMeta(arg)); err != nil {
					return nil, err
				}
				continue
			}
			var files []string
			err = filepath.WalkDir(m, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if p != m && hidden(e.Name()) {
					if e.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if !e.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("input directory %s: %w", m, err)
			}
			sort.Strings(files)
			for _, f := range files {
				if err := add(f, false); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no input files of a supported kind in %v", args)
	}
	return out, nil
}

// Automatic partitions: one per PartitionText bytes of input text (a
// compressed file counting compressionEstimate times its size), at least
// MinPartitions, so that a reduce task holds about as many band records
// as a map task writes, whatever the corpus's size.
const (
	MinPartitions = 32
	PartitionText = 64 << 20
	maxPartitions = 99999
)

// AutoPartitions is the number of band partitions for inputs.
func AutoPartitions(inputs []Input) int {
	text := estimatedText(inputs)
	return int(min(max(int64(MinPartitions), (text+PartitionText-1)/PartitionText), maxPartitions))
}

// GatherText is the input text above which AutoGather turns the gather
// stage on: about 7 GB of signature files with exact verification, where
// random reads start to outgrow a worker's page cache.
const GatherText = 4 << 30

// AutoGather resolves --gather auto: "on" for an output in object storage
// (where a random read is a request) or inputs of more than GatherText
// bytes of text (a compressed input byte counting compressionEstimate),
// else "off".
func AutoGather(inputs []Input, remoteOut bool) string {
	if remoteOut || estimatedText(inputs) > GatherText {
		return "on"
	}
	return "off"
}

// estimatedText is the text of inputs, a compressed byte counting
// compressionEstimate.
func estimatedText(inputs []Input) int64 {
	var text int64
	for _, in := range inputs {
		n := in.Size
		if formats.Compressed(in.Path) {
			n *= compressionEstimate
		}
		text += n
	}
	return text
}

// OpenInput opens an input file by local path or object-store URL.
func OpenInput(ctx context.Context, path string) (formats.File, error) {
	return storage.OpenFile(ctx, path)
}

// hidden reports whether a directory walk skips a name.
func hidden(name string) bool { return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") }

func hasMeta(s string) bool {
	for _, c := range s {
		if c == '*' || c == '?' || c == '[' {
			return true
		}
	}
	return false
}

// compressionEstimate is how many bytes of text a compressed input byte is
// taken to hold when chunks are planned (gzipped text is 3 to 5 times
// smaller than the text).
const compressionEstimate = 4

// MakePlan splits the inputs into chunks of about chunkBytes of text: large
// uncompressed JSONL files are cut at line boundaries, small files are
// packed together, and every other file is one piece. A compressed file
// counts as compressionEstimate times its size.
func MakePlan(ctx context.Context, inputs []Input, chunkBytes int64) (Plan, error) {
	plan := Plan{Inputs: inputs}
	var cur Chunk
	flush := func() {
		if len(cur.Pieces) > 0 {
			cur.Index = len(plan.Chunks)
			plan.Chunks = append(plan.Chunks, cur)
			cur = Chunk{}
		}
	}
	for _, in := range inputs {
		pieces, err := formats.Split(ctx, OpenInput, in.Path, in.Kind, chunkBytes)
		if err != nil {
			// Unreadable now: planned whole, in a chunk of its own (its
			// size is unknown), so that its map task tries again and,
			// failing, lists it as a reject (as for a file that becomes
			// unreadable after planning).
			flush()
			cur.Pieces = []formats.Piece{{Path: in.Path, Kind: in.Kind, End: -1, StartLine: 1}}
			cur.Bytes, cur.Text = in.Size, in.Size
			flush()
			continue
		}
		for _, p := range pieces {
			size := p.End - p.Start
			if p.End < 0 {
				size = in.Size - p.Start
			}
			text := size
			if formats.Compressed(in.Path) {
				text *= compressionEstimate
			}
			if cur.Text > 0 && cur.Text+text > chunkBytes {
				flush()
			}
			cur.Pieces = append(cur.Pieces, p)
			cur.Bytes += size
			cur.Text += text
		}
	}
	flush()
	if len(plan.Chunks) >= 1<<31 {
		return Plan{}, fmt.Errorf("%d chunks: raise --chunk-bytes", len(plan.Chunks))
	}
	return plan, nil
}
