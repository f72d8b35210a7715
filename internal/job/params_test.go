package job

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestResolveInvalid checks that every invalid parameter is an error that
// names its flag, and that several are reported together.
func TestResolveInvalid(t *testing.T) {
	tests := []struct {
		name string
		set  func(*Params)
		want []string // in the error
		bug  string   // a known bug: the test is skipped while it fails
	}{
		{"method", func(p *Params) { p.Method = "lsh" }, []string{"--method", `"lsh"`}, ""},
		{"simhash weights", func(p *Params) { p.SimHashWeights = "idf" }, []string{"--simhash-weights"}, ""},
		{"hamming negative", func(p *Params) { p.Hamming = -1 }, []string{"--hamming"}, ""},
		{"hamming too large", func(p *Params) { p.Hamming = 16 }, []string{"--hamming"}, ""},
		{"sketch", func(p *Params) { p.Sketch = "bbit" }, []string{"--sketch"}, ""},
		{"perms zero", func(p *Params) { p.K = 0 }, []string{"--perms"}, ""},
		{"perms too many", func(p *Params) { p.K = 4097 }, []string{"--perms", "4097"}, ""},
		{"threshold zero", func(p *Params) { p.Threshold = 0 }, []string{"--threshold"}, ""},
		{"threshold above one", func(p *Params) { p.Threshold = 1.01 }, []string{"--threshold"}, ""},
		{"threshold negative", func(p *Params) { p.Threshold = -0.5 }, []string{"--threshold"}, ""},
		{"threshold NaN", func(p *Params) { p.Threshold = math.NaN() }, []string{"--threshold"}, ""},
		{"threshold NaN, simhash", func(p *Params) { p.Method, p.Threshold = "simhash", math.NaN() }, []string{"--threshold"}, ""},
		{"partitions negative", func(p *Params) { p.Partitions = -1 }, []string{"--partitions"}, ""},
		{"partitions too many", func(p *Params) { p.Partitions = 100000 }, []string{"--partitions"}, ""},
		{"verify", func(p *Params) { p.Verify = "none" }, []string{"--verify"}, ""},
		{"keep", func(p *Params) { p.Keep = "last" }, []string{"--keep"}, ""},
		{"max bucket", func(p *Params) { p.MaxBucket = 1 }, []string{"--max-bucket"}, ""},
		{"max cluster pairs", func(p *Params) { p.MaxClusterPairs = 0 }, []string{"--max-cluster-pairs"}, ""},
		{"chunk bytes", func(p *Params) { p.ChunkBytes = 1023 }, []string{"--chunk-bytes"}, ""},
		{"max doc bytes", func(p *Params) { p.MaxDocBytes = -1 }, []string{"--max-doc-bytes"}, ""},
		{"input format", func(p *Params) { p.InputFormat = "csv" }, []string{"--input-format", `"csv"`}, ""},
		{"words", func(p *Params) { p.Words = 65 }, []string{"--words"}, ""},
		{"char grams", func(p *Params) { p.CharGrams = -1 }, []string{"--char-grams"}, ""},
		{"fp weight", func(p *Params) { p.FPWeight = -1 }, []string{"--fp-weight"}, ""},
		{"both weights zero", func(p *Params) { p.FPWeight, p.FNWeight = 0, 0 }, []string{"--fp-weight", "--fn-weight"}, ""},
		{"bands without rows", func(p *Params) { p.Bands = 3 }, []string{"--bands", "--rows"}, ""},
		{"rows without bands", func(p *Params) { p.Rows = 3 }, []string{"--bands", "--rows"}, ""},
		{"negative bands", func(p *Params) { p.Bands, p.Rows = -2, 3 }, []string{"--bands", "--rows"}, ""},
		{"bands x rows over perms", func(p *Params) { p.Bands, p.Rows = 17, 8 }, []string{"--bands 17", "--rows 8", "--perms 128"}, ""},
		{"shingle after strip 1", func(p *Params) { p.ShingleAfterStrip, p.Index = 1, false }, []string{"--shingle-after-strip 1"}, ""},
		{"shingle after strip negative", func(p *Params) { p.ShingleAfterStrip, p.Index = -2, false }, []string{"--shingle-after-strip -2"}, ""},
		{"shingle after strip with index", func(p *Params) { p.ShingleAfterStrip = 3 }, []string{"--shingle-after-strip", "--index=false"}, ""},
		{"paragraph unit alone", func(p *Params) { p.ParagraphUnit = "line" }, []string{"--paragraph-unit", "--shingle-after-strip"}, ""},
		{"several at once", func(p *Params) { p.Method, p.Keep, p.K = "x", "y", 0 }, []string{"--method", "--keep", "--perms"}, ""},
	}
	// Check (what a configuration's check runs) refuses what Resolve
	// (what the job runs) does: it only leaves the bands to Resolve.
	for _, resolve := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/resolve=%v", tt.name, resolve), func(t *testing.T) {
				p := DefaultParams()
				tt.set(&p)
				check := p.Check
				if resolve {
					check = p.Resolve
				}
				err := check()
				var missing []string
				for _, w := range tt.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						missing = append(missing, w)
					}
				}
				if len(missing) == 0 {
					return
				}
				if tt.bug != "" {
					t.Skipf("BUG: %s (err = %v)", tt.bug, err)
				}
				t.Errorf("err = %v; want it to name %q", err, missing)
			})
		}
	}
}

// TestCheckLeavesBands checks that Check leaves a MinHash job's bands and
// rows to Resolve (bands.Optimal), and fills in SimHash's.
func TestCheckLeavesBands(t *testing.T) {
	p := DefaultParams()
	if err := p.Check(); err != nil || p.Bands != 0 || p.Rows != 0 {
		t.Fatalf("Check: %v, bands %d rows %d, want 0 and 0", err, p.Bands, p.Rows)
	}
	if err := p.Resolve(); err != nil || p.Bands == 0 || p.Rows == 0 {
		t.Fatalf("Resolve after Check: %v, bands %d rows %d", err, p.Bands, p.Rows)
	}
	s := DefaultParams()
	s.Method = MethodSimHash
	if err := s.Check(); err != nil || s.Bands == 0 {
		t.Fatalf("Check of a SimHash job: %v, bands %d", err, s.Bands)
	}
}

// TestResolveBands checks the bands and rows Resolve chooses: MinHash's
// minimise the weighted error areas (the table in docs/design.md), given
// ones are kept, and SimHash's are its k+1 blocks.
func TestResolveBands(t *testing.T) {
	tests := []struct {
		name        string
		set         func(*Params)
		bands, rows int
		bug         string
	}{
		{"default", func(*Params) {}, 16, 8, ""},
		{"threshold 0.5", func(p *Params) { p.Threshold = 0.5 }, 26, 3, ""},
		{"threshold 0.7", func(p *Params) { p.Threshold = 0.7 }, 21, 6, ""},
		{"threshold 0.9", func(p *Params) { p.Threshold = 0.9 }, 9, 14, ""},
		{"given", func(p *Params) { p.Bands, p.Rows = 20, 5 }, 20, 5, ""},
		{"given, using every value", func(p *Params) { p.Bands, p.Rows = 32, 4 }, 32, 4, ""},
		{"given, few perms", func(p *Params) { p.K, p.Bands, p.Rows = 10, 2, 5 }, 2, 5, ""},
		{"one perm", func(p *Params) { p.K = 1 }, 1, 1, ""},
		{"simhash k=3", func(p *Params) { p.Method = "simhash" }, 4, 16, ""},
		{"simhash k=0", func(p *Params) { p.Method, p.Hamming = "simhash", 0 }, 1, 64, ""},
		{"simhash k=10", func(p *Params) { p.Method, p.Hamming = "simhash", 10 }, 11, 5, ""},
		{"simhash ignores given bands", func(p *Params) { p.Method, p.Hamming, p.Bands, p.Rows = "simhash", 6, 20, 5 }, 7, 9, ""},
		{"threshold 1", func(p *Params) { p.Threshold = 1 }, 1, 128, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultParams()
			tt.set(&p)
			err := p.Resolve()
			if err != nil && tt.bug != "" {
				t.Skipf("BUG: %s (err = %v)", tt.bug, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.bug != "" {
				return // fixed: any choice will do
			}
			if p.Bands != tt.bands || p.Rows != tt.rows {
				t.Errorf("bands %d rows %d, want %d and %d", p.Bands, p.Rows, tt.bands, tt.rows)
			}
			if bp := p.BandParams(); bp.Bands != p.Bands || bp.Rows != p.Rows {
				t.Errorf("BandParams %v", bp)
			}
			// Resolving again changes nothing.
			q := p
			if err := q.Resolve(); err != nil || !reflect.DeepEqual(q, p) {
				t.Errorf("second Resolve: %+v, %v", q, err)
			}
		})
	}
}

// TestParamsOptions checks that the shingle and reading options carry the
// parameters they are made of.
func TestParamsOptions(t *testing.T) {
	p := DefaultParams()
	p.Words, p.CharGrams, p.DigitsToZero, p.StripDiacritics = 7, 3, true, true
	p.IDField, p.TextField, p.MaxDocBytes = "uid", "body", 999
	if o := p.ShingleOptions(); o.Words != 7 || o.CharGrams != 3 || !o.DigitsToZero || !o.StripDiacritics {
		t.Errorf("shingle options %+v", o)
	}
	if o := p.ReadOptions(); o.IDField != "uid" || o.TextField != "body" || o.MaxDocBytes != 999 {
		t.Errorf("read options %+v", o)
	}
}

// TestAgainstJobOf checks which job an earlier job's chunk is of: the
// job a compacted index holds it for, else the index's own.
func TestAgainstJobOf(t *testing.T) {
	a := Against{Job: "weeks", FirstChunk: 0, Chunks: 9,
		Held: []Against{{Job: "w1", FirstChunk: 0, Chunks: 3}, {Job: "w2", FirstChunk: 3, Chunks: 4}}}
	for chunk, want := range map[int]string{0: "w1", 2: "w1", 3: "w2", 6: "w2", 7: "weeks", 8: "weeks"} {
		if got := a.JobOf(chunk); got != want {
			t.Errorf("JobOf(%d) = %q, want %q", chunk, got, want)
		}
	}
	if got := (Against{Job: "w3"}).JobOf(5); got != "w3" {
		t.Errorf("a job's own index: JobOf = %q, want w3", got)
	}
	if got, want := a.String(), "{weeks  0 9 0 held [{w1  0 3 0} {w2  3 4 0}]}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
