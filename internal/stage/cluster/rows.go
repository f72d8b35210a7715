package cluster

import (
	"cmp"
	"encoding/binary"
	"math"

	"github.com/neardup/neardup/internal/workfile"
)

// compRow is one row the nodes step sends to the components step: a
// document of the component Label, a member of one of its exact groups,
// or one of its verified pairs of representatives.
type compRow struct {
	Label  int64
	Kind   int32
	A      int64 // the document; the group's representative; the pair's first
	B      int64 // the member; the pair's second
	ID     string
	URL    string
	Tokens int32
	// Rank is the value the keep rule ranks the document by (rowDoc).
	Rank rank
	// Dropped is set for an earlier job's document that its own job
	// dropped (rowDoc): never published, it is never kept; Rep is the
	// document that job kept in its place.
	Dropped bool
	Rep     keptRep
}

// keptRep is the document an earlier job kept in place of one it
// dropped, as its index records it: Job names its job when it is not the
// one that dropped it.
type keptRep struct {
	Doc          int64
	ID, URL, Job string
}

// The flags of an encoded compRow: which of its optional fields follow.
const (
	rowHasNum = 1 << iota
	rowHasStr
	rowDropped
)

func appendCompRow(b []byte, r compRow) []byte {
	var flags int64
	if r.Rank.HasNum {
		flags |= rowHasNum
	}
	if r.Rank.HasStr {
		flags |= rowHasStr
	}
	if r.Dropped {
		flags |= rowDropped
	}
	for _, v := range []int64{r.Label, int64(r.Kind), r.A, r.B, int64(r.Tokens), flags} {
		b = binary.AppendVarint(b, v)
	}
	b = workfile.AppendString(workfile.AppendString(b, r.ID), r.URL)
	if r.Rank.HasNum {
		b = binary.AppendVarint(b, int64(math.Float64bits(r.Rank.Num)))
	}
	if r.Rank.HasStr {
		b = workfile.AppendString(b, r.Rank.Str)
	}
	if r.Dropped {
		b = binary.AppendVarint(b, r.Rep.Doc)
		b = workfile.AppendString(workfile.AppendString(workfile.AppendString(b, r.Rep.ID), r.Rep.URL), r.Rep.Job)
	}
	return b
}

func decodeCompRow(b []byte) (compRow, int) {
	d := workfile.DecodeRow(b)
	r := compRow{Label: d.Int(), Kind: int32(d.Int()), A: d.Int(), B: d.Int(), Tokens: int32(d.Int())}
	flags := d.Int()
	r.ID, r.URL = d.String(), d.String()
	if flags&rowHasNum != 0 {
		r.Rank.HasNum, r.Rank.Num = true, math.Float64frombits(uint64(d.Int()))
	}
	if flags&rowHasStr != 0 {
		r.Rank.HasStr, r.Rank.Str = true, d.String()
	}
	if flags&rowDropped != 0 {
		r.Dropped = true
		r.Rep.Doc = d.Int()
		r.Rep.ID, r.Rep.URL, r.Rep.Job = d.String(), d.String(), d.String()
	}
	return r, d.Used()
}

// The kinds of compRow, in the order a component's rows are sorted.
const (
	rowDoc int32 = iota
	rowMember
	rowPair
)

// compareCompRows orders rows by (label, kind, a, b). It compares a field
// only when those before are equal (cmp.Or would compare them all): it
// sorts every row of the components step.
func compareCompRows(x, y compRow) int {
	switch {
	case x.Label != y.Label:
		return cmp.Compare(x.Label, y.Label)
	case x.Kind != y.Kind:
		return cmp.Compare(x.Kind, y.Kind)
	case x.A != y.A:
		return cmp.Compare(x.A, y.A)
	}
	return cmp.Compare(x.B, y.B)
}

// lookupRow is what the output task of verify chunk Chunk needs to expand
// its pairs: the bounded cluster and kept document of a document
// (lookupKept: a pair's first document or a group's representative), or
// a member of the exact group of a pair's second document when that
// group is in another chunk's file (lookupMember).
type lookupRow struct {
	Chunk   int32
	Kind    int32
	Node    int64
	Cluster int64  // lookupKept
	Doc     int64  // the kept document; the member
	ID, URL string // the member's id and url
}

func appendLookupRow(b []byte, r lookupRow) []byte {
	for _, v := range []int64{int64(r.Chunk), int64(r.Kind), r.Node, r.Cluster, r.Doc} {
		b = binary.AppendVarint(b, v)
	}
	return workfile.AppendString(workfile.AppendString(b, r.ID), r.URL)
}

func decodeLookupRow(b []byte) (lookupRow, int) {
	d := workfile.DecodeRow(b)
	r := lookupRow{Chunk: int32(d.Int()), Kind: int32(d.Int()), Node: d.Int(), Cluster: d.Int(), Doc: d.Int()}
	r.ID, r.URL = d.String(), d.String()
	return r, d.Used()
}

// The kinds of lookupRow.
const (
	lookupKept int32 = iota
	lookupMember
	// lookupUnpublished: Node is an earlier job's document its job
	// dropped, a in some pair of the chunk (pairs/ says so).
	lookupUnpublished
)

// docInfo is what the cluster stage reads of a records.DocRecord: only
// these columns are decoded.
type docInfo struct {
	Doc     int64    `parquet:"doc"`
	ID      string   `parquet:"id"`
	URL     string   `parquet:"url"`
	Tokens  int32    `parquet:"tokens"`
	KeepNum *float64 `parquet:"keep_num,optional"`
	KeepStr *string  `parquet:"keep_str,optional"`
}

// droppedInfo is what the cluster stage reads of an earlier job's
// dropped list (job.DroppedFile: rows of records.Duplicate).
type droppedInfo struct {
	Doc     int64   `parquet:"doc"`
	KeptDoc int64   `parquet:"kept_doc"`
	KeptID  string  `parquet:"kept_id"`
	KeptURL string  `parquet:"kept_url"`
	KeptJob *string `parquet:"kept_job,optional"`
}
