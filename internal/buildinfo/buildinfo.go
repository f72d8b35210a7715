// Package buildinfo describes the running binary: neardup's module
// version, the VCS revision it was built from and the Go version, as
// runtime/debug.ReadBuildInfo reports them.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what a binary knows of its own build.
type Info struct {
	// Path is the main module's path, Version its version: a tag such as
	// v1.2.0 for `go install module@v1.2.0`, "(devel)" for a build from a
	// work tree.
	Path, Version string
	// Revision is the VCS revision the binary was built from and Modified
	// tells whether the work tree had uncommitted changes; Revision is
	// empty when the build did not stamp it (go build -buildvcs=false, go
	// test, a tree outside version control).
	Revision string
	Modified bool
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
}

// revision is the VCS revision that a build without version control
// stamps with the linker (the Dockerfile's build, whose context has no
// .git): go build -ldflags=-X=github.com/neardup/neardup/internal/buildinfo.revision=REV.
// It is set at link time only, never changed at run time.
var revision string

// Read returns the running binary's build information: the revision
// stamped by the linker when the Go toolchain stamped none.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	return withRevision(FromBuildInfo(bi, ok), revision)
}

// withRevision returns in with the revision rev if in has none; "" and
// "unknown" are none.
func withRevision(in Info, rev string) Info {
	if in.Revision == "" && rev != "" && rev != "unknown" {
		in.Revision = rev
	}
	return in
}

// FromBuildInfo returns the Info of bi; ok false (no build information)
// gives an unknown version and the running Go version.
func FromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	in := Info{Path: "github.com/neardup/neardup", Version: "unknown", GoVersion: runtime.Version()}
	if !ok || bi == nil {
		return in
	}
	if bi.Main.Path != "" {
		in.Path = bi.Main.Path
	}
	if bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Build is the revision, with "-dirty" when the work tree was modified;
// "" when the revision is unknown.
func (in Info) Build() string {
	if in.Revision == "" || !in.Modified {
		return in.Revision
	}
	return in.Revision + "-dirty"
}

// String is the one line `--version` prints, e.g.
// "github.com/neardup/neardup v1.2.0 revision 1a2b3c go1.26.8".
func (in Info) String() string {
	rev := in.Build()
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("%s %s revision %s %s", in.Path, in.Version, rev, in.GoVersion)
}

// CreatedBy is the created_by metadata of the Parquet files the binary
// writes, in the form Parquet readers parse:
// "neardup version v1.2.0 (build 1a2b3c)", the build part left out when
// the revision is unknown. The version loses the parentheses of "(devel)",
// which that form does not allow.
func (in Info) CreatedBy() string {
	s := "neardup version " + strings.Trim(in.Version, "()")
	if b := in.Build(); b != "" {
		s += " (build " + b + ")"
	}
	return s
}
