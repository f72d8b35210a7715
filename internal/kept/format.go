package kept

import (
	"fmt"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/formats"
)

// The values of Options.Format (and of the job's --kept-format): what the
// corpus's files are. Which inputs each can write is FormatMatrix's.
const (
	FormatAuto    = "auto"    // each input in its own format
	FormatJSONL   = "jsonl"   // every input as .jsonl.gz
	FormatParquet = "parquet" // every input as .parquet
	FormatWARC    = "warc"    // every input as WARC records (WARC and WET inputs only)
)

// Formats lists the values of Options.Format.
var Formats = []string{FormatAuto, FormatJSONL, FormatParquet, FormatWARC}

// How an input's records are written: the values of FileSummary.Copy.
const (
	copyMembers = "members" // WARC/WET records that are gzip members of their own, copied compressed
	copyRecords = "records" // WARC/WET records decompressed, each written as a gzip member
	copyLines   = "lines"   // JSONL lines as they are
	copyRows    = "rows"    // Parquet rows as they are (or, as JSON lines, objects of their columns)
	copyFile    = "file"    // a text file as it is
	copyColumns = "columns" // JSONL documents as Parquet rows of their members (columns.go)
	copyDocs    = "documents"
)

// FormatMatrix says, for every kind of input, what each format writes of
// it ("" where the format cannot apply, and CheckFormat refuses it):
//
//	input        auto           jsonl                  parquet                   warc
//	JSONL        lines as read  lines as read          a column per member       -
//	Parquet      rows as read   an object per row      rows as read              -
//	WARC, WET    records        id, url, text objects  id, url, text rows        records
//	text         the file       id, url, text object   id, url, text row         -
//
// WARC records are written as they are (each a gzip member); their
// documents as JSON objects or rows hold the id, URL and text the job read
// (WARC-Record-ID, WARC-Target-URI, the text of the record's block or
// HTML), not the record's other headers. A JSONL line, a Parquet row and a
// text file have no WARC record to write.
var FormatMatrix = map[formats.Kind]map[string]string{
	formats.KindJSONL:   {FormatAuto: copyLines, FormatJSONL: copyLines, FormatParquet: copyColumns},
	formats.KindParquet: {FormatAuto: copyRows, FormatJSONL: copyRows, FormatParquet: copyRows},
	formats.KindWARC:    {FormatAuto: copyRecords, FormatJSONL: copyDocs, FormatParquet: copyDocs, FormatWARC: copyRecords},
	formats.KindWET:     {FormatAuto: copyRecords, FormatJSONL: copyDocs, FormatParquet: copyDocs, FormatWARC: copyRecords},
	formats.KindText:    {FormatAuto: copyFile, FormatJSONL: copyDocs, FormatParquet: copyDocs},
}

// CheckFormat refuses a format that is none of Formats, and one that
// cannot write an input of inputs (FormatMatrix), naming the first such
// input.
func CheckFormat(format string, inputs []job.Input) error {
	if format == "" {
		format = FormatAuto
	}
	known := false
	for _, f := range Formats {
		known = known || f == format
	}
	if !known {
		return fmt.Errorf("the corpus's format must be %s, %s, %s or %s, not %q", FormatAuto, FormatJSONL, FormatParquet, FormatWARC, format)
	}
	for _, in := range inputs {
		if FormatMatrix[in.Kind][format] == "" {
			return fmt.Errorf("input %s (%s) cannot be written as %s: %s", in.Path, in.Kind, format, whyNot(in.Kind, format))
		}
	}
	return nil
}

// whyNot says why format cannot write an input of kind.
func whyNot(kind formats.Kind, format string) string {
	if format == FormatWARC {
		return "only WARC and WET inputs have WARC records to write (write it as jsonl or parquet)"
	}
	return fmt.Sprintf("inputs of kind %q cannot be written", kind)
}

// extension is the ending of the outputs of an input of kind written
// with format; "" keeps the input's name (a text file as it is).
func extension(kind formats.Kind, format string) string {
	switch FormatMatrix[kind][format] {
	case copyFile:
		return ""
	case copyRecords:
		if kind == formats.KindWET {
			return ".warc.wet.gz"
		}
		return ".warc.gz"
	}
	if format == FormatParquet || format == FormatAuto && kind == formats.KindParquet {
		return ".parquet"
	}
	return ".jsonl.gz"
}
