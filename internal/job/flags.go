package job

import "flag"

// RegisterPlanFlags registers the flags that choose the banding plan: the
// ones `coordinator params` takes.
func (p *Params) RegisterPlanFlags(fs *flag.FlagSet) {
	fs.IntVar(&p.K, "perms", p.K, "MinHash signature values (K)")
	fs.IntVar(&p.Bands, "bands", p.Bands, "LSH bands (b); with --rows, overrides the choice made from --threshold")
	fs.IntVar(&p.Rows, "rows", p.Rows, "rows per band (r)")
	fs.Float64Var(&p.Threshold, "threshold", p.Threshold, "Jaccard similarity at which a pair is a near-duplicate")
	fs.Float64Var(&p.FPWeight, "fp-weight", p.FPWeight, "weight of the false-positive area when choosing bands and rows")
	fs.Float64Var(&p.FNWeight, "fn-weight", p.FNWeight, "weight of the false-negative area when choosing bands and rows")
	fs.Var(checkLater(&p.Method), "method", "minhash (Jaccard, banded signatures) or simhash (64-bit fingerprints, Hamming distance)")
	fs.IntVar(&p.Hamming, "hamming", p.Hamming, "SimHash: largest Hamming distance of a near-duplicate pair")
}

// RegisterFlags registers a flag for every job parameter: its name,
// default (the value p holds) and help, in one place for every command.
func (p *Params) RegisterFlags(fs *flag.FlagSet) {
	p.RegisterPlanFlags(fs)
	fs.Var(checkLater(&p.Sketch), "sketch", "MinHash signature: "+sketchHelp)
	fs.Var(checkLater(&p.SimHashWeights), "simhash-weights", "SimHash shingle weights: none or tf (term frequency)")
	fs.IntVar(&p.Words, "words", p.Words, "tokens per shingle (k)")
	fs.Var(checkLater(&p.Tokenizer), "tokenizer", "how text becomes tokens: scripts (words where a script separates them with spaces, keeping combining marks; one token per character in Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar and Tibetan) or words-only (runs of letters and digits: the rule before scripts, to reproduce earlier results)")
	fs.IntVar(&p.CharGrams, "char-grams", p.CharGrams, "use character n-grams of this length instead of word shingles (languages without spaces)")
	fs.BoolVar(&p.DigitsToZero, "digits-to-zero", p.DigitsToZero, "map every digit to 0 before shingling")
	fs.BoolVar(&p.StripDiacritics, "strip-diacritics", p.StripDiacritics, "remove diacritics before shingling")
	fs.Uint64Var(&p.Seed, "seed", p.Seed, "hash seed")
	fs.IntVar(&p.Partitions, "partitions", p.Partitions, "band partitions (reduce tasks); 0: one per 64 MiB of input text, at least 32, so that a reduce task's memory does not grow with the corpus")
	fs.Var(checkLater(&p.Verify), "verify", "verification: exact (Jaccard of the shingle sets) or estimate (from signatures)")
	fs.Var(checkLater(&p.Gather), "gather", "how verify reads signatures: sets (map keeps each document's 64-bit shingle set in the work area, about 1.7 bytes a byte of text, which verify reads in place), on (verify's documents shuffled to its tasks from the text stores by sequential reads: for object storage and work areas larger than the page cache), off (each verify task reads every chunk's text store itself), auto (sets up to 1 GiB of input text, on beyond it, for an object-storage --out or with --against)")
	fs.Var(checkLater(&p.Keep), "keep", "which document of a cluster to keep: first (input order), longest (most tokens), newest (latest WARC-Date of WARC/WET records, \"date\" field of JSONL/Parquet ones; newest:FIELD names another field or header) or field:NAME[:asc|:desc] (the largest value of a numeric or string field or header, or with :asc the smallest); ties and documents without a value go to input order; in a series or with --against, an earlier job's published documents stay the kept ones")
	fs.BoolVar(&p.Index, "index", p.Index, "keep the job's index (index/: signatures, shingle sets, band file lists) for later jobs' --against and for query; --index=false removes it with the work area")
	fs.IntVar(&p.MaxBucket, "max-bucket", p.MaxBucket, "a band bucket of more documents compares each with its first few only, reported (bounds candidate pairs)")
	fs.Int64Var(&p.MaxClusterPairs, "max-cluster-pairs", p.MaxClusterPairs, "a cluster with more pairs lists only its kept document's pairs in pairs/, reported")
	fs.StringVar(&p.IDField, "id-field", p.IDField, "JSONL/Parquet id field")
	fs.StringVar(&p.TextField, "text-field", p.TextField, "JSONL/Parquet text field")
	fs.IntVar(&p.MaxDocBytes, "max-doc-bytes", p.MaxDocBytes, "reject documents with more text bytes (0: no limit)")
	fs.Var(checkLater(&p.InputFormat), "input-format", "kind of every input file: auto (by its name, else by its content), warc, wet, jsonl, parquet or text")
	fs.Int64Var(&p.ChunkBytes, "chunk-bytes", p.ChunkBytes, "text bytes per map task, about (a chunk ends at the file or line boundary nearest it; a compressed input byte counts as 4); 0 chooses: a tenth of the input, from 32 MiB to 512 MiB")
	fs.BoolVar(&p.Strict, "strict", p.Strict, "fail the job on any rejected record, failed task, or input file skipped for its unknown kind")
	fs.BoolVar(&p.Paragraphs, "paragraphs", p.Paragraphs, "the paragraph pass: cut every document into units (--paragraph-unit), count the documents holding each unit (normalised as shingles are) and list the units held by two or more in paragraphs/")
	fs.StringVar(&p.ParagraphUnit, "paragraph-unit", p.ParagraphUnit, "the paragraph pass's unit: line (the default), or paragraph (the text between blank lines)")
	fs.IntVar(&p.ShingleAfterStrip, "shingle-after-strip", p.ShingleAfterStrip, "N: sketch every document without its units (--paragraph-unit) that N documents or more of the job hold, counted in a pass before map (0: off)")
	fs.BoolVar(&p.Fsync, "fsync", p.Fsync, "flush every file to disk before renaming it (durability across power loss)")
}

// laterFlag binds the enum parameter *v to a flag: it sets *v as v's own
// Set does, but keeps a value that Set refuses as given, for Resolve to
// report with every other bad parameter ("--perms must be ...; --verify
// must be ..."), where a flag.FlagSet would stop at the first.
type laterFlag[T ~string, P interface {
	*T
	flag.Value
}] struct{ v P }

// checkLater binds the enum parameter *v to a flag (see laterFlag).
func checkLater[T ~string, P interface {
	*T
	flag.Value
}](v P) flag.Value {
	return laterFlag[T, P]{v}
}

// String returns the value of the parameter ("" for the zero laterFlag,
// whose value flag.PrintDefaults asks to tell a default from none).
func (f laterFlag[T, P]) String() string {
	if f.v == nil {
		return ""
	}
	return f.v.String()
}

// Set sets the parameter to s; it never fails (see laterFlag).
func (f laterFlag[T, P]) Set(s string) error {
	if f.v.Set(s) != nil {
		*f.v = T(s)
	}
	return nil
}
