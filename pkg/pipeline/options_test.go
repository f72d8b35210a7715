package pipeline

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
)

// TestParams checks the job parameters of Options: the zero value is the
// command's defaults, and each option set takes its parameter's place.
func TestParams(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want func(p *job.Params) // changes from job.DefaultParams
	}{
		{"zero", Options{}, func(*job.Params) {}},
		{"method", Options{Method: SimHash, Hamming: 5}, func(p *job.Params) { p.Method, p.Hamming = "simhash", 5 }},
		{"threshold", Options{Threshold: 0.7}, func(p *job.Params) { p.Threshold = 0.7 }},
		{"perms and words", Options{Perms: 64, Words: 3}, func(p *job.Params) { p.K, p.Words = 64, 3 }},
		{"tokenizer", Options{Tokenizer: TokenizeWordsOnly}, func(p *job.Params) { p.Tokenizer = "words-only" }},
		{"keep", Options{Keep: KeepLongest}, func(p *job.Params) { p.Keep = "longest" }},
		{"keep newest", Options{Keep: KeepNewest}, func(p *job.Params) { p.Keep = "newest" }},
		{"keep field", Options{Keep: KeepField("quality", false)}, func(p *job.Params) { p.Keep = "field:quality" }},
		{"keep field asc", Options{Keep: KeepField("rank", true)}, func(p *job.Params) { p.Keep = "field:rank:asc" }},
		{"input", Options{InputFormat: FormatJSONL, IDField: "key", TextField: "body"},
			func(p *job.Params) { p.InputFormat, p.IDField, p.TextField = "jsonl", "key", "body" }},
		{"text format", Options{InputFormat: FormatText}, func(p *job.Params) { p.InputFormat = "text" }},
		{"partitions and seed", Options{Partitions: 7, Seed: 42}, func(p *job.Params) { p.Partitions, p.Seed = 7, 42 }},
		{"no index", Options{NoIndex: true}, func(p *job.Params) { p.Index = false }},
		{"paragraphs", Options{Paragraphs: true}, func(p *job.Params) { p.Paragraphs = true }},
		{"paragraph unit", Options{Paragraphs: true, ParagraphUnit: UnitParagraph},
			func(p *job.Params) { p.Paragraphs, p.ParagraphUnit = true, "paragraph" }},
		{"shingle after strip", Options{ShingleAfterStrip: 20, NoIndex: true},
			func(p *job.Params) { p.ShingleAfterStrip, p.Index = 20, false }},
		{"not parameters", Options{Workers: 3, NATSURL: "nats://x:4222", Overwrite: true}, func(*job.Params) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.params()
			if err != nil {
				t.Fatal(err)
			}
			want := job.DefaultParams()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("params:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestBadOptions checks that a bad option is refused, naming it.
func TestBadOptions(t *testing.T) {
	ok := Options{Inputs: []string{"in"}, Out: "out"}
	with := func(f func(o *Options)) Options {
		o := ok
		f(&o)
		return o
	}
	tests := []struct {
		name string
		o    Options
		want []string // in the error, each
	}{
		{"method", with(func(o *Options) { o.Method = "minhsah" }), []string{"Options.Method", `"minhsah"`}},
		{"threshold above 1", with(func(o *Options) { o.Threshold = 1.5 }), []string{"Options.Threshold", "1.5"}},
		{"threshold negative", with(func(o *Options) { o.Threshold = -0.2 }), []string{"Options.Threshold"}},
		{"threshold NaN", with(func(o *Options) { o.Threshold = math.NaN() }), []string{"Options.Threshold"}},
		{"perms", with(func(o *Options) { o.Perms = 5000 }), []string{"Options.Perms", "5000"}},
		{"words", with(func(o *Options) { o.Words = -1 }), []string{"Options.Words"}},
		{"hamming", with(func(o *Options) { o.Method, o.Hamming = SimHash, -2 }), []string{"Options.Hamming"}},
		{"tokenizer", with(func(o *Options) { o.Tokenizer = "spaces" }), []string{"Options.Tokenizer", `"spaces"`}},
		{"keep", with(func(o *Options) { o.Keep = "last" }), []string{"Options.Keep", `"last"`}},
		{"input format", with(func(o *Options) { o.InputFormat = "csv" }), []string{"Options.InputFormat", `"csv"`}},
		{"partitions", with(func(o *Options) { o.Partitions = -3 }), []string{"Options.Partitions", "-3"}},
		{"two at once", with(func(o *Options) { o.Keep, o.Perms = "last", -1 }), []string{"Options.Keep", "Options.Perms"}},
		{"no out", with(func(o *Options) { o.Out = "" }), []string{"Options.Out is required"}},
		{"out scheme", with(func(o *Options) { o.Out = "ftp://host/out" }), []string{"Options.Out", "ftp"}},
		{"no inputs", with(func(o *Options) { o.Inputs = nil }), []string{"Options.Inputs"}},
		{"input scheme", with(func(o *Options) { o.Inputs = []string{"in", "ftp://h/x"} }), []string{"Options.Inputs", "ftp"}},
		{"against scheme", with(func(o *Options) { o.Against = []string{"ftp://h/x"} }), []string{"Options.Against", "ftp"}},
		{"workers", with(func(o *Options) { o.Workers = -1 }), []string{"Options.Workers", "-1"}},
		{"kept format", with(func(o *Options) { o.WriteKept, o.KeptFormat = "kept", "csv" }), []string{"Options.KeptFormat", `"csv"`}},
		{"kept format alone", with(func(o *Options) { o.KeptFormat = CorpusParquet }), []string{"Options.KeptFormat goes with Options.WriteKept"}},
		{"kept scheme", with(func(o *Options) { o.WriteKept = "ftp://h/k" }), []string{"Options.WriteKept", "ftp"}},
		{"paragraph unit", with(func(o *Options) { o.Paragraphs, o.ParagraphUnit = true, "sentence" }), []string{"Options.ParagraphUnit", `"sentence"`}},
		{"paragraph unit alone", with(func(o *Options) { o.ParagraphUnit = UnitParagraph }), []string{"Options.ParagraphUnit goes with Options.Paragraphs"}},
		{"shingle after strip 1", with(func(o *Options) { o.ShingleAfterStrip, o.NoIndex = 1, true }), []string{"Options.ShingleAfterStrip 1"}},
		{"shingle after strip with an index", with(func(o *Options) { o.ShingleAfterStrip = 5 }), []string{"Options.ShingleAfterStrip needs Options.NoIndex"}},
		{"strip without a kept corpus", with(func(o *Options) { o.Paragraphs, o.StripParagraphs = true, &StripRule{MinCount: 2} }),
			[]string{"Options.StripParagraphs goes with Options.WriteKept"}},
		{"strip without the pass", with(func(o *Options) {
			o.WriteKept, o.KeptFormat, o.StripParagraphs = "k", CorpusJSONL, &StripRule{MinCount: 2}
		}),
			[]string{"Options.StripParagraphs needs Options.Paragraphs"}},
		{"strip as WARC", with(func(o *Options) {
			o.Paragraphs, o.WriteKept, o.StripParagraphs = true, "k", &StripRule{MinCount: 2}
		}), []string{"Options.StripParagraphs", "Options.KeptFormat jsonl or parquet"}},
		{"strip min count", with(func(o *Options) {
			o.Paragraphs, o.WriteKept, o.KeptFormat, o.StripParagraphs = true, "k", CorpusJSONL, &StripRule{MinCount: 1, MinKeptChars: -1}
		}), []string{"Options.StripParagraphs.MinCount must be at least 2", "Options.StripParagraphs.MinKeptChars"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.o.config()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("%v: not ErrInvalidOptions", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a flag of the command, not an option", err)
			}
		})
	}
}

// TestConfig checks the rest of a job's configuration: the workers, the
// server and the output's location.
func TestConfig(t *testing.T) {
	cfg, err := Options{Inputs: []string{"in"}, Out: "rel/out"}.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers < 1 || cfg.NATSURL != "" || !strings.HasPrefix(cfg.Out, "/") || !strings.HasSuffix(cfg.Out, "/rel/out") {
		t.Errorf("default config: workers %d, NATS %q, out %q", cfg.Workers, cfg.NATSURL, cfg.Out)
	}
	if err := cfg.Check(); err != nil {
		t.Errorf("the pipeline refuses the default config: %v", err)
	}
	cfg, err = Options{Inputs: []string{"in"}, Out: "s3://bucket/out", NATSURL: "nats://h:4222", Workers: 2}.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Out != "s3://bucket/out" || cfg.NATSURL != "nats://h:4222" || cfg.Conn.URL != cfg.NATSURL {
		t.Errorf("config: out %q, NATS %q (conn %q)", cfg.Out, cfg.NATSURL, cfg.Conn.URL)
	}
	cfg, err = Options{Inputs: []string{"in"}, Out: "out", WriteKept: "rel/kept", KeptFormat: CorpusParquet}.config()
	if err != nil || !strings.HasSuffix(cfg.WriteKept, "/rel/kept") || !strings.HasPrefix(cfg.WriteKept, "/") || cfg.KeptFormat != "parquet" {
		t.Errorf("config: kept corpus %q as %q (%v)", cfg.WriteKept, cfg.KeptFormat, err)
	}
	// The kept corpus stripped: the first holder keeps a unit unless All.
	for _, r := range []StripRule{{MinCount: 3, MinKeptChars: 40}, {MinCount: 2, All: true}} {
		cfg, err := Options{Inputs: []string{"in"}, Out: "out", Paragraphs: true, WriteKept: "kept", KeptFormat: CorpusJSONL, StripParagraphs: &r}.config()
		want := job.Strip{MinCount: r.MinCount, KeepFirst: !r.All, MinKeptChars: r.MinKeptChars}
		if err != nil || cfg.KeptStrip == nil || *cfg.KeptStrip != want {
			t.Errorf("StripParagraphs %+v: the job strips %+v (%v), want %+v", r, cfg.KeptStrip, err, want)
		}
		if err := cfg.Check(); err != nil {
			t.Errorf("StripParagraphs %+v: the pipeline refuses the config: %v", r, err)
		}
	}
	// The disk-full timeout: the command's default unless set; negative
	// waits (0 for the pipeline).
	for _, tt := range []struct{ set, want time.Duration }{
		{0, control.DefaultDiskFullTimeout}, {5 * time.Second, 5 * time.Second}, {-1, 0},
	} {
		cfg, err := Options{Inputs: []string{"in"}, Out: "out", DiskFullTimeout: tt.set}.config()
		if err != nil || cfg.DiskFullTimeout != tt.want {
			t.Errorf("DiskFullTimeout %v: the pipeline waits %v (%v), want %v", tt.set, cfg.DiskFullTimeout, err, tt.want)
		}
	}
}

// TestIndexOptions checks the query options of IndexOptions.
func TestIndexOptions(t *testing.T) {
	tests := []struct {
		name string
		o    IndexOptions
		want string // in the error; "" for none
	}{
		{"zero", IndexOptions{}, ""},
		{"set", IndexOptions{Threshold: 0.5, Tokenizer: TokenizeScripts, CacheBytes: 1 << 20}, ""},
		{"threshold", IndexOptions{Threshold: 2}, "IndexOptions.Threshold"},
		{"tokenizer", IndexOptions{Tokenizer: "spaces"}, "IndexOptions.Tokenizer"},
		{"cache", IndexOptions{CacheBytes: -1}, "IndexOptions.CacheBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qo, err := tt.o.options()
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "" && (qo.Threshold != tt.o.Threshold || string(qo.Tokenizer) != string(tt.o.Tokenizer) || qo.CacheBytes != tt.o.CacheBytes):
				t.Errorf("query options %+v from %+v", qo, tt.o)
			case tt.want != "" && (err == nil || !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want ErrInvalidOptions naming %s", err, tt.want)
			}
		})
	}
}

// TestStatus checks that the public statuses are the manifest's.
func TestStatus(t *testing.T) {
	if StatusComplete != manifest.StatusComplete || StatusPartial != manifest.StatusPartial {
		t.Errorf("statuses %q, %q; the manifest's are %q, %q", StatusComplete, StatusPartial, manifest.StatusComplete, manifest.StatusPartial)
	}
}
