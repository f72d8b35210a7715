package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/control"
)

// TestSeriesFlags checks how --series and --name set a job's output and
// name (and the member's kept corpus, DIR/NAME of --write-kept), and the
// usage errors.
func TestSeriesFlags(t *testing.T) {
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.FixedZone("UTC-3", -3*3600)) // 2026-11-26 in UTC
	tests := []struct {
		name           string
		flags          seriesFlags
		out, job       string // given
		wantOut, wantJ string
		err            string
		kept, wantKept string // --write-kept given, and the member's
	}{
		{name: "no series", out: "o", wantOut: "o"},
		{name: "named", flags: seriesFlags{"s3://b/dedup", "2026-W48"}, wantOut: "s3://b/dedup/2026-W48", wantJ: "2026-W48"},
		{name: "today in UTC", flags: seriesFlags{"dedup/", ""}, wantOut: "dedup/2026-11-26", wantJ: "2026-11-26"},
		{name: "--job wins", flags: seriesFlags{"dedup", "w1"}, job: "mine", wantOut: "dedup/w1", wantJ: "mine"},
		{name: "with --out", flags: seriesFlags{"dedup", "w1"}, out: "o", err: "--series and --out"},
		{name: "--name alone", flags: seriesFlags{"", "w1"}, err: "--name goes with --series"},
		{name: "bad name", flags: seriesFlags{"dedup", "a/b"}, err: `member name "a/b"`},
		{name: "a name series list ignores", flags: seriesFlags{"dedup", "_under"}, err: `member name "_under": a name starting with _ or . is not a member`},
		{name: "bad scheme", flags: seriesFlags{"s4://b/x", "w1"}, err: "--series"},
		{name: "a bucket's options stay at the end", flags: seriesFlags{"s3://b/dedup?endpoint=http://minio:9000&region=eu-west-1", "2026-W48"}, wantOut: "s3://b/dedup/2026-W48?endpoint=http://minio:9000&region=eu-west-1", wantJ: "2026-W48"},
		{name: "kept corpus", flags: seriesFlags{"s3://b/dedup", "2026-W48"}, kept: "s3://b/kept?region=eu-west-1", wantOut: "s3://b/dedup/2026-W48", wantJ: "2026-W48", wantKept: "s3://b/kept/2026-W48?region=eu-west-1"},
		{name: "kept corpus without a series", out: "o", kept: "k", wantOut: "o", wantKept: "k"},
		{name: "kept corpus of a bad scheme", flags: seriesFlags{"dedup", "w1"}, kept: "s4://b/k", err: "--write-kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := control.Config{Out: tt.out, Job: tt.job, WriteKept: tt.kept}
			err := tt.flags.apply(&cfg, now)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || cfg.Out != tt.wantOut || cfg.Job != tt.wantJ || cfg.WriteKept != tt.wantKept {
				t.Fatalf("out %q, job %q, kept %q, err %v; want %q, %q, %q", cfg.Out, cfg.Job, cfg.WriteKept, err, tt.wantOut, tt.wantJ, tt.wantKept)
			}
		})
	}
}

// TestSeriesListWarns lists a series whose directory holds entries that
// are not members: a directory named _under (which a job can no longer
// be named), a symbolic link to a member kept elsewhere and a file; each
// is warned about, with why, and the members are listed.
func TestSeriesListWarns(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"2026-W01", "_under"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "2026-W02")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main("coordinator", []string{"series", "list", dir}, Coordinator(), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "2026-W01") {
		t.Errorf("the member is not listed:\n%s", stdout.String())
	}
	for _, w := range []string{`"_under" ignored: a name starting with _ or .`, `"2026-W02" ignored: a symbolic link, not followed`, `"notes.txt" ignored: a file`} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr.String())
		}
	}
}
