package job

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/localfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// Input is one input file.
type Input struct {
	Path string       `json:"path"`
	Kind formats.Kind `json:"kind"`
	Size int64        `json:"size"`
	// ModTime is the file's modification time when the job was planned
	// (Unix nanoseconds; 0 when unknown): with Size, what a map task
	// checks to tell a file changed since.
	ModTime int64 `json:"mtime,omitempty"`
	// Compression is what the file's content told ("gzip", "zstd" or
	// "none") when its name did not tell its kind; "" goes by its name.
	Compression string `json:"compression,omitempty"`
}

// compressed reports whether the file is compressed.
func (in Input) compressed() bool { return formats.IsCompressed(in.Path, in.Compression) }

// Skipped is a file under an input directory, prefix or pattern that is
// not read, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Rejected marks a file that is not a regular file (a named pipe, a
	// socket, a device, or a link to one): not an input, and listed in
	// rejects/ as well (PlannedRejectFile), so that a complete job has
	// read or listed as rejected everything under its inputs.
	Rejected bool `json:"rejected,omitempty"`
	// Dir marks a directory (or an object-store prefix) passed over
	// whole: the job's own output, or an earlier job's (see
	// InputOptions.Exclude).
	Dir bool `json:"dir,omitempty"`
	// Doc marks a dataset's documentation found beside its files (see
	// IsDocumentation): never an input, passed over without a warning.
	Doc bool `json:"doc,omitempty"`
}

// InputOptions tell ExpandInputs how to recognise input files.
type InputOptions struct {
	// Format is formats.KindAuto (by name, else by content) or the kind
	// of every input file.
	Format formats.Kind
	// Strict makes a file of no known kind under a directory, prefix or
	// pattern an error instead of a skipped file.
	Strict bool
	// Exclude names directories (local paths, or object-store URLs taken
	// as prefixes) whose files are not inputs, with why: the job's output
	// and its embedded NATS store. Directories holding a job's output are
	// passed over too, named or not (jobOutputMarker).
	Exclude map[string]string
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
	// FirstChunk numbers the first chunk (Chunks[i].Index is FirstChunk+i):
	// a job matched against earlier ones (--against) numbers its chunks
	// after theirs, so that every ordinal names one document of them all.
	FirstChunk int       `json:"first_chunk,omitempty"`
	Inputs     []Input   `json:"inputs"`
	Skipped    []Skipped `json:"skipped,omitempty"`
	Chunks     []Chunk   `json:"chunks"`
}

// ExpandInputs turns arguments (files, directories, globs) into the list of
// input files, in a stable order: arguments in the order given, the files of
// a directory or glob sorted by path. A file's kind is told by its name,
// else by its content, or is o.Format (formats.Detect). Within a directory,
// files of no known kind are skipped and listed with the reason (an error
// with o.Strict), and files and directories whose names start with "_" or
// "." (markers, work areas and side files, as in Hadoop and Spark) are
// passed over, as are such names among a pattern's matches; a file named
// directly must be of a known kind.
//
// Only regular files are inputs (a symbolic link counts by its target):
// a named pipe, a socket or a device is never opened; named directly it
// is an error, found under a directory or pattern it is skipped with
// Rejected set (an error with o.Strict).
//
// An object-store URL (s3://bucket/prefix, gs://, azblob://) names an
// object or, as a directory does, every object under the prefix, filtered
// the same way.
//
// The directories of o.Exclude (the job's output) and every directory
// that holds a neardup job's output are passed over whole, each listed as
// skipped (Dir), wherever they are: a directory named or a pattern's
// match too.
func ExpandInputs(ctx context.Context, args []string, o InputOptions) ([]Input, []Skipped, error) {
	if o.Format == "" {
		o.Format = formats.KindAuto
	}
	var (
		out     []Input
		skipped []Skipped
	)
	seen, skippedSeen := map[string]bool{}, map[string]bool{}
	excluded := newExclusions(o.Exclude)
	// add adds the file at path of the given size and modification
	// time (size -1: unknown, stat it).
	skip := func(sk Skipped) {
		if !skippedSeen[sk.Path] {
			skippedSeen[sk.Path] = true
			skipped = append(skipped, sk)
		}
	}
	add := func(path string, size int64, mod time.Time, explicit bool) error {
		if seen[path] {
			return nil
		}
		if !storage.IsURL(path) {
			// Before anything opens it: a FIFO's open waits for a
			// writer, a device reads for ever.
			sk, err := irregular(path, explicit)
			switch {
			case err != nil:
				return err
			case sk != nil && sk.Rejected && o.Strict:
				return fmt.Errorf("input %s is not read (--strict): %s", path, sk.Reason)
			case sk != nil:
				skip(*sk)
				return nil
			}
		}
		f, err := formats.Detect(ctx, OpenInput, path, o.Format)
		if err != nil {
			switch {
			case !explicit && formats.IsUnknownKind(err) && IsDocumentation(path):
				skip(Skipped{Path: path, Reason: "documentation, not an input", Doc: true})
				return nil
			case explicit && formats.IsUnknownKind(err):
				return err // names the file
			case explicit:
				return fmt.Errorf("input %s: %w", path, err)
			case o.Strict:
				return fmt.Errorf("input %s is not read (--strict): %w", path, err)
			}
			if nr := (*localfile.NotRegularError)(nil); errors.As(err, &nr) {
				// Swapped for a FIFO or a device since it was looked at.
				skip(Skipped{Path: path, Reason: nr.Reason(), Rejected: true})
				return nil
			}
			skip(Skipped{Path: path, Reason: skipReason(path, err)})
			return nil
		}
		if size < 0 {
			st, err := os.Stat(path)
			if err != nil && explicit {
				return fmt.Errorf("input %s: %w", path, err)
			}
			size = 0
			if err == nil {
				size, mod = st.Size(), st.ModTime()
			} // else a file in a directory that cannot be read (a broken link): its map task lists it as a reject
		}
		seen[path] = true
		in := Input{Path: path, Kind: f.Kind, Size: size, Compression: f.Compression}
		if !mod.IsZero() {
			in.ModTime = mod.UnixNano()
		}
		out = append(out, in)
		return nil
	}
	for _, arg := range args {
		if storage.IsURL(arg) {
			if l, err := storage.ParseLocation(arg); err != nil {
				return nil, nil, fmt.Errorf("input %s: %w", arg, err)
			} else if !l.Local() {
				objs, err := storage.ListObjects(ctx, arg, hidden)
				if err != nil {
					return nil, nil, fmt.Errorf("input %s: %w", arg, err)
				}
				if len(objs) == 0 {
					return nil, nil, fmt.Errorf("input %s: no objects under this prefix", arg)
				}
				explicit := len(objs) == 1 && objs[0].URL == l.String()
				for _, obj := range objs {
					if why, prefix := excluded.object(l, obj.URL); why != "" {
						skip(Skipped{Path: prefix, Reason: why, Dir: true})
						continue
					}
					if err := add(obj.URL, obj.Size, obj.ModTime, explicit); err != nil {
						return nil, nil, err
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
				return nil, nil, fmt.Errorf("input pattern %q: %w", arg, err)
			}
			if len(m) == 0 {
				return nil, nil, fmt.Errorf("input pattern %q matches no file", arg)
			}
			sort.Strings(m)
			// Matches of a pattern are filtered as a directory's entries
			// are (as Hadoop filters glob matches): DIR/* skips DIR/_work.
			matches = slices.DeleteFunc(m, func(p string) bool { return hidden(filepath.Base(p)) })
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, nil, fmt.Errorf("input %s: %w", m, err)
			}
			if !st.IsDir() {
				if err := add(m, -1, time.Time{}, !hasMeta(arg)); err != nil {
					return nil, nil, err
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
				if e.IsDir() {
					if why := excluded.dir(p); why != "" {
						skip(Skipped{Path: p, Reason: why, Dir: true})
						return filepath.SkipDir
					}
				}
				if !e.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if err != nil {
				return nil, nil, fmt.Errorf("input directory %s: %w", m, err)
			}
			sort.Strings(files)
			for _, f := range files {
				if err := add(f, -1, time.Time{}, false); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	if len(out) == 0 {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf(": the first, %s: %s", skipped[0].Path, skipped[0].Reason)
		}
		return nil, nil, fmt.Errorf("no input files of a supported kind in %v (%d skipped%s)", args, len(skipped), why)
	}
	return out, skipped, nil
}

// irregular looks at the local file at path, following symbolic links: a
// regular file (or one that cannot be looked at, which its reader
// reports) gives nil and nil. Any other is no input: named directly, an
// error naming it and its type; found under a directory or pattern, a
// Skipped (Rejected for a named pipe, a socket or a device, which is
// listed in rejects/; a link to a directory, which a walk does not
// follow, is only skipped).
func irregular(path string, explicit bool) (*Skipped, error) {
	_, err := localfile.Stat(path)
	var nr *localfile.NotRegularError
	if !errors.As(err, &nr) {
		return nil, nil
	}
	if explicit {
		return nil, fmt.Errorf("input %w: neardup reads regular files only", err)
	}
	if nr.Type == "directory" {
		return &Skipped{Path: path, Reason: "a symbolic link to a directory, not followed"}, nil
	}
	return &Skipped{Path: path, Reason: nr.Reason(), Rejected: true}, nil
}

// skipReason is why a file found under an input is skipped: the reason
// Detect gave, without the path the listing already shows.
func skipReason(path string, err error) string {
	var u *formats.UnknownKindError
	if errors.As(err, &u) {
		return "unknown kind: " + u.Reason
	}
	return "cannot be read: " + strings.TrimPrefix(err.Error(), path+": ")
}

// OpenInput opens an input file by local path or object-store URL.
func OpenInput(ctx context.Context, path string) (formats.File, error) {
	return storage.OpenFile(ctx, path)
}

// IsDocumentation reports whether a file of no input kind, found under a
// directory or pattern, is the documentation of the files beside it: a
// Markdown or reStructuredText file (a dataset card, such as a Hugging
// Face dataset's README.md), or a README, LICENSE, LICENCE, NOTICE or
// CHANGELOG of any extension but an input's. Such a file is no input that
// was missed, so the job passes over it without a warning, also with
// --strict.
func IsDocumentation(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	switch filepath.Ext(base) {
	case ".md", ".markdown", ".rst":
		return true
	}
	stem, _, _ := strings.Cut(base, ".")
	switch stem {
	case "readme", "license", "licence", "notice", "changelog":
		return true
	}
	return false
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
// packed together (a chunk ends at the boundary nearest chunkBytes), and
// every other file is one piece. A compressed file
// counts as compressionEstimate times its size. A chunkBytes of 0 is
// AutoChunkBytes.
func MakePlan(ctx context.Context, inputs []Input, chunkBytes int64) (Plan, error) {
	if chunkBytes <= 0 {
		chunkBytes = AutoChunkBytes(inputs)
	}
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
		target := chunkBytes
		if in.compressed() {
			target = 0 // whole, whatever its name says
		}
		pieces, err := formats.Split(ctx, OpenInput, in.Path, in.Kind, target)
		if err != nil {
			// Unreadable now: planned whole, in a chunk of its own (its
			// size is unknown), so that its map task tries again and,
			// failing, lists it as a reject (as for a file that becomes
			// unreadable after planning).
			flush()
			cur.Pieces = []formats.Piece{{Path: in.Path, Kind: in.Kind, End: -1, StartLine: 1, Compression: in.Compression,
				FileSize: in.Size, FileMTime: in.ModTime}}
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
			if in.compressed() {
				text *= compressionEstimate
			}
			// A chunk ends at the piece boundary nearest chunkBytes: a
			// piece joins it unless that passes chunkBytes by more than
			// the chunk falls short without it. Ending it before any
			// piece that passes made 11 chunks of 100 equal files for a
			// target of a tenth of them.
			if cur.Text > 0 && cur.Text+text-chunkBytes > chunkBytes-cur.Text {
				flush()
			}
			p.Compression = in.Compression
			p.FileSize, p.FileMTime = in.Size, in.ModTime
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

// PieceChanged tells whether the file of a piece has another size or
// modification time than when it was planned. A piece planned without
// its time (its file unreadable then, or an old plan), or whose file
// cannot be looked at now, is not known to have changed: its reader
// says what it finds.
func PieceChanged(ctx context.Context, p formats.Piece) bool {
	if p.FileMTime == 0 {
		return false
	}
	size, mod, err := storage.StatFile(ctx, p.Path)
	if err != nil {
		return false
	}
	planned := time.Unix(0, p.FileMTime)
	if storage.IsURL(p.Path) {
		// An object store gives listings in milliseconds and HEAD in
		// whole seconds (HTTP dates).
		planned, mod = planned.Truncate(time.Second), mod.Truncate(time.Second)
	}
	// A store that does not say when an object changed is judged by its
	// size alone.
	return size != p.FileSize || !mod.IsZero() && !mod.Equal(planned)
}
