package kept

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// Roots are the locations the inputs a job's manifest names must lie
// under (the worker's --data-root). A job's directory can be written by whoever
// ran its tasks, so its manifest, and the paths of docs/, are not trusted
// to say what write-kept reads: the operator says it.
type Roots interface {
	// Empty tells that there are no roots: every path would be allowed.
	Empty() bool
	// Check returns an error naming path unless it lies under a root,
	// with ".." and symbolic links resolved.
	Check(path string) error
}

// MarkerFile marks a directory as written by write-kept: it is written
// first, before any output, so that --overwrite can tell a corpus it may
// replace (even one whose writing failed) from a directory of other files.
const MarkerFile = "_WRITE_KEPT"

// ownName matches the names write-kept writes in its directory: the
// outputs NNNNN-STEM[-NNNNN].EXT (NNNNN the input's place in the
// manifest) and the files beside them.
var ownName = regexp.MustCompile(`^(` + OutputPattern + `|` + regexp.QuoteMeta(SummaryFile) + `|` + SuccessFile + `|` + PartialFile + `|` + MarkerFile + `|` + regexp.QuoteMeta(AnnotationsFile) + `|` + ShortDir + `/` + OutputPattern + `)$`)

// OutputPattern matches the names of the corpus's files: NNNNN-STEM.EXT or
// NNNNN-STEM-NNNNN.EXT, NNNNN the input's place among the job's inputs.
const OutputPattern = `[0-9]{5,}-[^/]+`

// checkInputs refuses the inputs of the manifest unless every one lies
// under every one of roots; there must be some.
func checkInputs(where string, inputs []job.Input, roots []Roots) error {
	if len(roots) == 0 {
		return errors.New("no roots to read the job's inputs under: name the job's inputs as it was run with them, or the directories they lie under (--data-root)")
	}
	for _, r := range roots {
		if r.Empty() {
			return errors.New("empty roots would admit any input the job's manifest names")
		}
	}
	for i, in := range inputs {
		for _, r := range roots {
			if err := r.Check(in.Path); err != nil {
				return fmt.Errorf("%s: %s names input %d, %s, which write-kept does not read: %w", where, job.ManifestFile, i, in.Path, err)
			}
		}
	}
	return nil
}

// checkOpened checks again, on Linux, the local file f opened by the name
// of input against the roots, by the path the system opened
// (/proc/self/fd): a directory of the inputs replaced by a symbolic link
// after checkInputs cannot lead the read out of them. Where there is no
// such path (another system, no /proc, an object), the check made before
// opening stands.
func checkOpened(f storage.File, input string, roots []checker) error {
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return nil
	}
	opened, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd.Fd()))
	if err != nil {
		return nil
	}
	for _, r := range roots {
		if err := r.Check(opened); err != nil {
			return fmt.Errorf("input %s was opened as %s, which write-kept does not read: %w", input, opened, err)
		}
	}
	return nil
}

// Place is a location write-kept reads and must not write into: the job,
// an input.
type Place struct {
	What string // "the job", "input 3", "the INPUT"
	Loc  string
}

// CheckPlacement refuses an output location dir that is, lies under or
// holds one of the places (the job, its inputs): writing there, or
// emptying it with --overwrite, would change what the corpus is made of.
func CheckPlacement(dir string, places []Place) error {
	d, err := resolve(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, p := range places {
		l, err := resolve(p.Loc)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.What, p.Loc, err)
		}
		switch {
		case nested(l, d):
			return fmt.Errorf("%s: the corpus cannot be written into %s (%s), or under it", dir, p.What, p.Loc)
		case nested(d, l):
			return fmt.Errorf("%s: holds %s (%s): the corpus cannot be written around it", dir, p.What, p.Loc)
		}
	}
	return nil
}

// resolve parses a location; a local path is made absolute with its
// symbolic links resolved, up to its longest existing prefix.
func resolve(loc string) (storage.Location, error) {
	l, err := storage.ParseLocation(loc)
	if err != nil || !l.Local() {
		return l, err
	}
	l.Path, err = dataroot.RealPath(l.Path)
	return l, err
}

// nested tells whether inner is outer or lies under it: a local path by
// whole components, an object location in the same bucket of the same
// store by whole key elements (whatever its options: the endpoint may be
// written two ways).
func nested(outer, inner storage.Location) bool {
	if outer.Local() || inner.Local() {
		return outer.Local() && inner.Local() && storage.Within(outer.Path, inner.Path)
	}
	return outer.Scheme == inner.Scheme && outer.Bucket == inner.Bucket &&
		(outer.Key == "" || inner.Key == outer.Key || strings.HasPrefix(inner.Key, outer.Key+"/"))
}

// checkOwn refuses to empty a directory holding names unless it is
// write-kept's: it carries MarkerFile (or, written by a build before the
// marker, kept.json) and every file in it is one write-kept writes.
func checkOwn(dir string, names []string) error {
	own := false
	for _, n := range names {
		switch {
		case n == job.ManifestFile || strings.HasSuffix(n, "/"+job.ManifestFile):
			return fmt.Errorf("%s: holds a job (%s); not overwriting it", dir, n)
		case n == MarkerFile || n == SummaryFile:
			own = true
		}
	}
	if !own {
		return fmt.Errorf("%s: %w (%d files, %s among them) and is not a corpus write-kept wrote (no %s): --overwrite replaces only those", dir, ErrNotEmpty, len(names), names[0], MarkerFile)
	}
	for _, n := range names {
		if !ownName.MatchString(n) {
			return fmt.Errorf("%s: %w: %s is not a file write-kept writes, so --overwrite does not remove it (move it, or choose another --dir)", dir, ErrNotEmpty, n)
		}
	}
	return nil
}
