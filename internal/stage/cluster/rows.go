package cluster

import (
	"cmp"
	"encoding/binary"
	"math"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/workfile"
)

// compRow is one row the nodes step sends to the components step: a
// document of the component Label, a member of one of its exact groups,
// or one of its verified pairs of representatives.
//
// The components step sorts all of its rows, nearly all of them pairs:
// what only some documents have is behind a pointer (more), nil for the
// rest, so that a row stays 72 bytes.
type compRow struct {
	Label  int64
	Kind   int32
	Tokens int32
	A      int64 // the document; the group's representative; the pair's first
	B      int64 // the member; the pair's second
	ID     string
	URL    string
	more   *rowMore
}

// rowMore is what a document's row (rowDoc) may carry beyond the others.
type rowMore struct {
	// Rank is the value the keep rule ranks the document by.
	Rank rank
	// Dropped is set for an earlier job's document that its own job
	// dropped: never published, it is never kept; Rep is the document
	// that job kept in its place.
	Dropped bool
	Rep     keptRep
}

// rank is the value the keep rule ranks the row's document by.
func (r compRow) rank() rank {
	if r.more == nil {
		return rank{}
	}
	return r.more.Rank
}

// dropped reports whether the row's document is an earlier job's that
// its job dropped.
func (r compRow) dropped() bool { return r.more != nil && r.more.Dropped }

// rep is the document kept in place of a dropped one.
func (r compRow) rep() keptRep {
	if r.more == nil {
		return keptRep{}
	}
	return r.more.Rep
}

// setMore returns the row's rowMore, made if it has none.
func (r *compRow) setMore() *rowMore {
	if r.more == nil {
		r.more = &rowMore{}
	}
	return r.more
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
	rk, rep := r.rank(), r.rep()
	if rk.HasNum {
		flags |= rowHasNum
	}
	if rk.HasStr {
		flags |= rowHasStr
	}
	if r.dropped() {
		flags |= rowDropped
	}
	for _, v := range []int64{r.Label, int64(r.Kind), r.A, r.B, int64(r.Tokens), flags} {
		b = binary.AppendVarint(b, v)
	}
	b = workfile.AppendString(workfile.AppendString(b, r.ID), r.URL)
	if rk.HasNum {
		b = binary.AppendVarint(b, int64(math.Float64bits(rk.Num)))
	}
	if rk.HasStr {
		b = workfile.AppendString(b, rk.Str)
	}
	if flags&rowDropped != 0 {
		b = binary.AppendVarint(b, rep.Doc)
		b = workfile.AppendString(workfile.AppendString(workfile.AppendString(b, rep.ID), rep.URL), rep.Job)
	}
	return b
}

func decodeCompRow(b []byte) (compRow, int) {
	d := workfile.DecodeRow(b)
	r := compRow{Label: d.Int(), Kind: int32(d.Int()), A: d.Int(), B: d.Int(), Tokens: int32(d.Int())}
	flags := d.Int()
	r.ID, r.URL = d.String(), d.String()
	if flags&rowHasNum != 0 {
		m := r.setMore()
		m.Rank.HasNum, m.Rank.Num = true, math.Float64frombits(uint64(d.Int()))
	}
	if flags&rowHasStr != 0 {
		m := r.setMore()
		m.Rank.HasStr, m.Rank.Str = true, d.String()
	}
	if flags&rowDropped != 0 {
		m := r.setMore()
		m.Dropped = true
		m.Rep.Doc = d.Int()
		m.Rep.ID, m.Rep.URL, m.Rep.Job = d.String(), d.String(), d.String()
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

// docInfoColumns are docInfo's columns but doc, in the order docInfoOf
// takes their values.
func docInfoColumns() []string { return []string{"id", "url", "tokens", "keep_num", "keep_str"} }

// docInfoOf is the docInfo of document doc from its values of
// docInfoColumns (pqfile.Select), copied out of them.
func docInfoOf(doc int64, v []parquet.Value) docInfo {
	d := docInfo{Doc: doc, ID: string(v[0].ByteArray()), URL: string(v[1].ByteArray()), Tokens: v[2].Int32()}
	if !v[3].IsNull() {
		d.KeepNum = new(v[3].Double())
	}
	if !v[4].IsNull() {
		d.KeepStr = new(string(v[4].ByteArray()))
	}
	return d
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
