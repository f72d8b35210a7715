package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := func(settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/neardup/neardup", Version: "v1.2.0"}, Settings: settings}
	}
	tests := []struct {
		name                      string
		bi                        *debug.BuildInfo
		ok                        bool
		linked                    string // the revision -ldflags=-X stamped
		wantString, wantCreatedBy string
	}{
		{"tagged and stamped", stamped(debug.BuildSetting{Key: "vcs.revision", Value: "1a2b3c"}, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), true, "",
			"github.com/neardup/neardup v1.2.0 revision 1a2b3c go1.26.8", "neardup version v1.2.0 (build 1a2b3c)"},
		{"modified tree", stamped(debug.BuildSetting{Key: "vcs.revision", Value: "1a2b3c"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), true, "",
			"github.com/neardup/neardup v1.2.0 revision 1a2b3c-dirty go1.26.8", "neardup version v1.2.0 (build 1a2b3c-dirty)"},
		{"not stamped", stamped(), true, "",
			"github.com/neardup/neardup v1.2.0 revision unknown go1.26.8", "neardup version v1.2.0"},
		{"work tree build", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/neardup/neardup", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ff00"}}}, true, "",
			"github.com/neardup/neardup (devel) revision ff00 go1.26.8", "neardup version devel (build ff00)"},
		{"no build info", nil, false, "",
			"github.com/neardup/neardup unknown revision unknown " + runtime.Version(), "neardup version unknown"},
		{"linker-stamped (Docker image)", stamped(), true, "9f8e7d",
			"github.com/neardup/neardup v1.2.0 revision 9f8e7d go1.26.8", "neardup version v1.2.0 (build 9f8e7d)"},
		{"linker-stamped unknown", stamped(), true, "unknown",
			"github.com/neardup/neardup v1.2.0 revision unknown go1.26.8", "neardup version v1.2.0"},
		{"VCS-stamped wins over the linker", stamped(debug.BuildSetting{Key: "vcs.revision", Value: "1a2b3c"}), true, "9f8e7d",
			"github.com/neardup/neardup v1.2.0 revision 1a2b3c go1.26.8", "neardup version v1.2.0 (build 1a2b3c)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := withRevision(FromBuildInfo(tt.bi, tt.ok), tt.linked)
			if got := in.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
			if got := in.CreatedBy(); got != tt.wantCreatedBy {
				t.Errorf("CreatedBy() = %q, want %q", got, tt.wantCreatedBy)
			}
		})
	}
}
