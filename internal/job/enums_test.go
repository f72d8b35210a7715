package job

import (
	"flag"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/shingle"
)

// enumValue is a pointer to an enum: a flag.Value with Check.
type enumValue interface {
	flag.Value
	Check() error
}

// TestEnumSet checks every enum's values: Set takes each and String gives
// it back (the spelling of its flag and JSON); Set refuses any other
// value, naming the flag and the values it takes, as Resolve does, and
// leaves the enum as it was; Check agrees with Set.
func TestEnumSet(t *testing.T) {
	tests := []struct {
		name   string
		new    func() enumValue // at its zero value
		values []string
		bad    []string
		want   string // the error of a bad value, before `, not "..."`
	}{
		{"method", func() enumValue { return new(Method) }, []string{"minhash", "simhash"},
			[]string{"lsh", "MinHash", ""}, "--method must be minhash or simhash"},
		{"sketch", func() enumValue { return new(Sketch) }, []string{"dart", "classic"},
			[]string{"bbit", "Dart"}, "--sketch must be dart or classic"},
		{"weights", func() enumValue { return new(Weights) }, []string{"none", "tf"},
			[]string{"idf", "TF"}, "--simhash-weights must be none or tf"},
		{"verify", func() enumValue { return new(Verify) }, []string{"exact", "estimate"},
			[]string{"none", "maybe"}, "--verify must be exact or estimate"},
		{"gather", func() enumValue { return new(Gather) }, []string{"auto", "on", "off"},
			[]string{"true", "yes"}, "--gather must be auto, on, off or sets"},
		{"keep", func() enumValue { return new(Keep) }, []string{"first", "longest", "newest", "newest:crawl_date", "field:quality", "field:quality:asc", "field:a:b:desc"},
			[]string{"last", "shortest", "field:", "field::asc", "newest:", "Field:x"}, "--keep must be first, longest, newest, newest:FIELD or field:NAME[:asc|:desc]"},
		{"tokenizer", func() enumValue { return new(Tokenizer) }, []string{"scripts", "words-only"},
			[]string{"scripts-v9", "words"}, "--tokenizer must be scripts or words-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.values {
				v := tt.new()
				if err := v.Set(s); err != nil {
					t.Errorf("Set(%q): %v", s, err)
				}
				if got := v.String(); got != s {
					t.Errorf("Set(%q).String() = %q", s, got)
				}
				if err := v.Check(); err != nil {
					t.Errorf("Check after Set(%q): %v", s, err)
				}
			}
			for _, s := range tt.bad {
				v := tt.new()
				if err := v.Set(tt.values[0]); err != nil {
					t.Fatal(err)
				}
				err := v.Set(s)
				if want := tt.want + ", not " + `"` + s + `"`; err == nil || err.Error() != want {
					t.Errorf("Set(%q): error %v, want %q", s, err, want)
				}
				if got := v.String(); got != tt.values[0] {
					t.Errorf("a refused Set(%q) changed the value from %q to %q", s, tt.values[0], got)
				}
			}
			if err := tt.new().Check(); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Check of the zero value: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTokenizerRule checks that the tokenizers are named as shingle names
// its rules, every one of them, and that an unknown name is an invalid
// rule.
func TestTokenizerRule(t *testing.T) {
	tests := []struct {
		t    Tokenizer
		want shingle.Tokenizer
	}{
		{TokenizeScripts, shingle.TokenizeScripts},
		{TokenizeWordsOnly, shingle.TokenizeWordsOnly},
	}
	for _, tt := range tests {
		if got := tt.t.Rule(); got != tt.want || tt.t.String() != tt.want.String() {
			t.Errorf("%q.Rule() = %v, want %v", tt.t, got, tt.want)
		}
	}
	for r := shingle.Tokenizer(0); (shingle.Options{Tokenizer: r}).Validate() == nil; r++ {
		if err := Tokenizer(r.String()).Check(); err != nil {
			t.Errorf("shingle's tokenizer %v has no Tokenizer: %v", r, err)
		}
	}
	p := DefaultParams()
	p.Tokenizer = "scripts-v9"
	if err := p.ShingleOptions().Validate(); err == nil {
		t.Error("an unknown tokenizer makes valid shingle options")
	}
}

// TestEnumFlags checks the flags of the enums: they take every value and
// set the parameter, a bad one too (parsing goes on), which Resolve then
// reports together with the other bad parameters. The input format is
// read as formats.ParseKind reads it.
func TestEnumFlags(t *testing.T) {
	tests := []struct {
		args    []string
		check   func(p Params) bool
		wantErr []string // in Resolve's error; none: no error
	}{
		{[]string{"--method", "simhash", "--simhash-weights", "tf", "--verify", "estimate", "--gather", "off", "--keep", "longest"},
			func(p Params) bool {
				return p.Method == MethodSimHash && p.SimHashWeights == WeightsTF && p.Verify == VerifyEstimate &&
					p.Gather == GatherOff && p.Keep == KeepLongest
			}, nil},
		{[]string{"--sketch", "classic", "--tokenizer", "words-only", "--input-format", "JSONL"},
			func(p Params) bool {
				return p.Sketch == SketchClassic && p.Tokenizer == TokenizeWordsOnly && p.InputFormat == formats.KindJSONL
			}, nil},
		{[]string{"--input-format", "text"}, func(p Params) bool { return p.InputFormat == formats.KindText }, nil},
		{[]string{}, func(p Params) bool { return p.Method == MethodMinHash && p.InputFormat == formats.KindAuto }, nil},
		{[]string{"--perms", "0", "--verify", "maybe", "--keep", "last", "--input-format", "csv"},
			func(p Params) bool { return p.Verify == "maybe" && p.Keep == "last" && p.InputFormat == "csv" },
			[]string{"--perms must be in 1..4096, not 0", `--verify must be exact or estimate, not "maybe"`,
				`--keep must be first, longest, newest, newest:FIELD or field:NAME[:asc|:desc], not "last"`, `--input-format must be auto, warc, wet, jsonl, parquet or text, not "csv"`}},
		{[]string{"--method", "lsh", "--gather", "yes", "--sketch", "bbit", "--simhash-weights", "idf", "--tokenizer", "x"},
			func(p Params) bool { return p.Method == "lsh" },
			[]string{`--method must be minhash or simhash, not "lsh"`, `--gather must be auto, on, off or sets, not "yes"`,
				`--sketch must be dart or classic, not "bbit"`, `--simhash-weights must be none or tf, not "idf"`,
				`--tokenizer must be scripts or words-only, not "x"`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			p := DefaultParams()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			p.RegisterFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if !tt.check(p) {
				t.Errorf("params %+v", p)
			}
			err := p.Resolve()
			if len(tt.wantErr) == 0 && err != nil {
				t.Errorf("Resolve: %v", err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Resolve: %v; want it to say %q", err, w)
				}
			}
		})
	}
	// The help names the default, and the zero value is no default.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	p := DefaultParams()
	p.RegisterFlags(fs)
	if f := fs.Lookup("gather"); f == nil || f.DefValue != "auto" {
		t.Errorf("--gather: %+v, want the default auto", f)
	}
	var help strings.Builder
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if !strings.Contains(help.String(), "(default minhash)") {
		t.Errorf("help without the default of --method:\n%s", help.String())
	}
}
