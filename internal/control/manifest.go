package control

import (
	"runtime"
	"runtime/debug"

	"github.com/neardup/neardup/internal/manifest"
)

// Manifest is the job's record, written as manifest.json: see package
// manifest. Run returns it.
type Manifest = manifest.Manifest

// versions lists the versions of Go, neardup and its main dependencies.
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["neardup"] = bi.Main.Version
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/nats-io/nats.go", "github.com/nats-io/nats-server/v2", "github.com/parquet-go/parquet-go",
			"github.com/cespare/xxhash/v2", "github.com/klauspost/compress":
			v[d.Path] = d.Version
		}
	}
	return v
}
