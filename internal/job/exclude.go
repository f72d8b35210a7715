package job

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/neardup/neardup/internal/storage"
)

// exclusions are the directories an input walk passes over whole: the
// ones InputOptions.Exclude names, and every directory that holds a
// neardup job's output (jobOutputMarker), so that an output under an
// input directory, the job's own on a rerun or an earlier one's, is never
// read as input.
type exclusions struct {
	dirs    []excludedDir               // local, existing ones
	objects map[string]storage.Location // object-store prefixes, by why
}

type excludedDir struct {
	info fs.FileInfo
	why  string
}

// newExclusions looks at the directories of InputOptions.Exclude; one
// that does not exist (yet) holds nothing to pass over.
func newExclusions(exclude map[string]string) exclusions {
	x := exclusions{objects: map[string]storage.Location{}}
	for _, path := range slices.Sorted(maps.Keys(exclude)) {
		why := exclude[path]
		if storage.IsURL(path) {
			if l, err := storage.ParseLocation(path); err == nil && !l.Local() {
				x.objects[why] = l
				continue
			} else if err == nil {
				path = l.Path
			}
		}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			x.dirs = append(x.dirs, excludedDir{info: st, why: why})
		}
	}
	return x
}

// dir tells why the directory at path is passed over, "" when it is
// read.
func (x exclusions) dir(path string) string {
	if st, err := os.Stat(path); err == nil {
		for _, d := range x.dirs {
			if os.SameFile(st, d.info) {
				return d.why + ": not an input"
			}
		}
	}
	if marker := jobOutputMarker(path); marker != "" {
		return "a neardup job's output (it holds " + marker + "): not an input"
	}
	return ""
}

// object tells why the object at url, listed under the prefix arg, is
// passed over, and the excluded prefix it lies under; "" when it is
// read. As a local walk meets only directories below the one it lists,
// an excluded prefix counts under arg only: an input under the output
// is read.
func (x exclusions) object(arg storage.Location, url string) (why, prefix string) {
	l, err := storage.ParseLocation(url)
	if err != nil {
		return "", ""
	}
	for _, why := range slices.Sorted(maps.Keys(x.objects)) {
		p := x.objects[why]
		if arg.Holds(p) && p.Holds(l) && l.Key != p.Key {
			return why + ": not an input", p.String()
		}
	}
	return "", ""
}

// jobOutputMarker names the file that shows the local directory dir to
// hold a neardup job's output, "" when none does: the lock every
// coordinator takes in its output, an unfinished job's spec, or a
// manifest beside the marker of a finished job. (A corpus written by
// write-kept holds _SUCCESS but no manifest: it is an input.)
func jobOutputMarker(dir string) string {
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		return err == nil
	}
	for _, m := range []string{LockFile, SpecFile} {
		if has(m) {
			return m
		}
	}
	if has(ManifestFile) {
		for _, m := range []string{SuccessFile, PartialFile} {
			if has(m) {
				return ManifestFile + " and " + m
			}
		}
	}
	return ""
}
