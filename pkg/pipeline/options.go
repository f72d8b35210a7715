package pipeline

import (
	"io"
	"log/slog"
	"time"
)

// Method is how documents are sketched and compared.
type Method string

// The methods.
const (
	// MinHash compares shingle sets by their Jaccard similarity, found
	// with banded MinHash signatures and then computed exactly.
	MinHash Method = "minhash"
	// SimHash compares 64-bit SimHash fingerprints by Hamming distance.
	SimHash Method = "simhash"
)

// Tokenizer is the rule that cuts text into tokens.
type Tokenizer string

// The tokenizers.
const (
	// TokenizeScripts makes a token of each word in scripts written with
	// spaces, and of each character in scripts written without them (Han,
	// Kana, Thai, ...) and in Hangul.
	TokenizeScripts Tokenizer = "scripts"
	// TokenizeWordsOnly makes a token of each run of letters and digits:
	// the rule of earlier versions, to reproduce their results.
	TokenizeWordsOnly Tokenizer = "words-only"
)

// Keep says which document of a cluster is kept, as --keep does: one
// of the constants, "newest:FIELD" (the latest date in another field or
// header), or KeepField's rule. Ties, and documents without a value,
// go to input order. In a job matched against earlier ones (Against, a
// series), an earlier job's published documents stay the kept ones: the
// rule chooses which of them is named, and chooses among the job's own
// documents only in clusters without one.
type Keep string

// The choices of the kept document.
const (
	KeepFirst   Keep = "first"   // the first in input order
	KeepLongest Keep = "longest" // the one with the most tokens
	// KeepNewest keeps the latest dated: a WARC or WET record's
	// WARC-Date, a JSONL or Parquet record's "date" field (RFC 3339 and
	// ISO 8601 date-times or dates, HTTP dates, 14-digit timestamps, Unix
	// seconds, Parquet TIMESTAMP and DATE columns).
	KeepNewest Keep = "newest"
)

// KeepField is the rule keeping the document with the largest value of
// a record's field (a numeric or string JSONL member or top-level
// Parquet column, a WARC or WET header), or with asc the smallest:
// "field:NAME" or "field:NAME:asc".
func KeepField(name string, asc bool) Keep {
	if asc {
		return Keep("field:" + name + ":asc")
	}
	return Keep("field:" + name)
}

// InputFormat is the kind of the input files.
type InputFormat string

// The input formats.
const (
	// FormatAuto tells each file's kind by its name, else by its content.
	FormatAuto    InputFormat = "auto"
	FormatWET     InputFormat = "wet"     // WARC conversion records (Common Crawl WET)
	FormatWARC    InputFormat = "warc"    // WARC response records with HTML or text bodies
	FormatJSONL   InputFormat = "jsonl"   // one JSON object a line, with id and text fields
	FormatParquet InputFormat = "parquet" // string id and text columns
	FormatText    InputFormat = "text"    // one document a file, its path the id
)

// CorpusFormat is what the files of a job's kept corpus are
// (Options.KeptFormat).
type CorpusFormat string

// The formats of a kept corpus. A JSONL or Parquet input, or a text file,
// cannot be written as WARC: the job refuses it, naming the input.
const (
	CorpusAuto    CorpusFormat = "auto"    // each input in its own format
	CorpusJSONL   CorpusFormat = "jsonl"   // .jsonl.gz: a document a line
	CorpusParquet CorpusFormat = "parquet" // .parquet: a JSONL document's members as columns, its text once
	CorpusWARC    CorpusFormat = "warc"    // WARC and WET records as they are
)

// ParagraphUnit is what the paragraph pass cuts a document into
// (Options.ParagraphUnit).
type ParagraphUnit string

// The units of the paragraph pass.
const (
	UnitLine      ParagraphUnit = "line"      // each line
	UnitParagraph ParagraphUnit = "paragraph" // the text between blank lines
)

// StripRule is how a job's kept corpus strips the repeated units its
// paragraph pass found (Options.StripParagraphs, the command's
// --strip-paragraphs and --min-kept-chars).
type StripRule struct {
	// MinCount is the least number of documents holding a unit for it to
	// be stripped: 2 or more.
	MinCount int
	// All strips a unit from every document holding it; by default the
	// first document holding it (the earliest in input order) keeps it.
	All bool
	// MinKeptChars drops a kept document left with fewer characters of
	// text once stripped, listing it with its reason; 0 keeps them all.
	MinKeptChars int
}

// DefaultDiskFullTimeout is how long a job waits for a full disk unless
// Options.DiskFullTimeout says otherwise.
const DefaultDiskFullTimeout = time.Minute

// Options describe a job for Run. Out and Inputs are required; every other
// field's zero value means the default the coordinator command uses (its
// flag of the same name in --help).
type Options struct {
	// Inputs are the files, directories or glob patterns to read: local
	// paths or object-store URLs (s3://; gs:// and azblob:// in a program
	// built with -tags gcs and azure).
	Inputs []string
	// Out is the output directory: a local path or an object-store URL
	// (s3://bucket/prefix; gs://... and azblob://... with -tags gcs and
	// azure).
	Out string
	// Against lists the outputs of earlier jobs, each with its index, to
	// match against: their documents are never dropped, and a document of
	// this job that is a near-duplicate of one of theirs is dropped in its
	// favour.
	Against []string

	// Method is MinHash (the default) or SimHash.
	Method Method
	// Threshold is the Jaccard similarity at which a pair is a
	// near-duplicate, in (0, 1].
	Threshold float64
	// Perms is the number of MinHash signature values (K).
	Perms int
	// Hamming is, with SimHash, the largest Hamming distance of a pair.
	Hamming int
	// Words is the number of tokens per shingle.
	Words int
	// Tokenizer is the rule that cuts text into tokens.
	Tokenizer Tokenizer
	// Keep chooses the document kept of each cluster.
	Keep Keep
	// InputFormat is the kind of every input file (FormatAuto: each
	// file's own).
	InputFormat InputFormat
	// IDField and TextField name the id and text fields of JSONL and
	// Parquet inputs.
	IDField, TextField string
	// Partitions is the number of band partitions (reduce tasks); 0
	// chooses it from the size of the inputs.
	Partitions int
	// Seed seeds the hashes; 0 takes the default seed.
	Seed uint64
	// Paragraphs runs the paragraph pass (--paragraphs): every document
	// cut into units of ParagraphUnit, the documents holding each unit
	// counted across the job, the repeated ones listed in paragraphs/.
	Paragraphs bool
	// ParagraphUnit is the unit of the paragraph pass and of
	// ShingleAfterStrip: UnitLine when empty.
	ParagraphUnit ParagraphUnit
	// ShingleAfterStrip, when 2 or more, sketches and compares every
	// document without the units that at least that many of the job's
	// documents hold (boilerplate), so that pages differing only in it
	// pair and pages sharing only it do not; it needs NoIndex. 0 is off.
	ShingleAfterStrip int
	// NoIndex removes the job's index (index/) at the end: without it a
	// later job cannot match against this one and OpenIndex cannot query
	// it.
	NoIndex bool

	// Workers is the number of in-process workers, on a NATS server
	// embedded in this process (0: one per CPU). It is ignored with
	// NATSURL.
	Workers int
	// NATSURL, if set, is the NATS JetStream server (or several servers of
	// a cluster, separated by commas) whose workers run the job's tasks
	// (the worker command); no worker runs in this process then.
	NATSURL string
	// DiskFullTimeout bounds how long the job waits while the disk of the
	// output (or of the embedded server's store) is full before it fails
	// naming the disk: 0 is DefaultDiskFullTimeout, as for the command; a
	// negative value waits for ever.
	DiskFullTimeout time.Duration
	// Overwrite replaces a complete job, or an unfinished one with other
	// options, in Out (and the kept corpus a job wrote in WriteKept).
	Overwrite bool

	// WriteKept, if set, is where the job writes its kept corpus, as its
	// last stage: its inputs without their duplicates, a file for each
	// input file. A local directory or an object-store URL, outside Out,
	// the inputs and Against. KeptFormat is what its files are
	// (CorpusAuto when empty).
	WriteKept  string
	KeptFormat CorpusFormat
	// StripParagraphs, with WriteKept and Paragraphs, strips the repeated
	// units from the kept corpus's documents (KeptFormat CorpusJSONL or
	// CorpusParquet): a JSONL input's lines keep their other members as
	// JSONL, any other document is written as id, url and text; nil
	// strips none.
	StripParagraphs *StripRule

	// Log receives the job's log records; nil discards them.
	Log *slog.Logger
	// Progress receives a line of progress per stage; nil for none.
	Progress io.Writer
}

// IndexOptions control OpenIndex. Their zero value takes each index's own
// threshold and tokenizer and keeps no cache.
type IndexOptions struct {
	// Threshold is the similarity at or above which an indexed document
	// is a match; 0 takes each index's own (its job's Threshold).
	Threshold float64
	// Tokenizer, if set, refuses an index made with another tokenizer;
	// unset, the indexes must agree with each other.
	Tokenizer Tokenizer
	// CacheBytes bounds the memory of the band files kept between
	// queries; 0 keeps none (each query reads what it needs).
	CacheBytes int64
}
