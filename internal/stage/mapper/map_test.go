package mapper

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// mapInput is a JSONL input with documents, an empty one, records the
// reader rejects, a blank line it skips and a line without an id.
const mapInput = `{"id":"a","text":"One two three four five six."}
{"id":"e","text":""}
{"id":"x","text":"seven eight
{"id":"m"}

{"text":"seven eight nine"}
{"id":"n","text":5}
{"id":"a2","text":"one, two, three, four, five, six"}
`

// TestMapCounts checks what Map reports and writes for documents, an
// empty document and rejected records, in chunk 3.
func TestMapCounts(t *testing.T) {
	ctx := context.Background()
	in := worktest.WriteTemp(t, "in.jsonl", mapInput)
	for _, verify := range []job.Verify{job.VerifyExact, job.VerifyEstimate} {
		t.Run(verify.String(), func(t *testing.T) {
			st := worktest.NewStore(t)
			p := worktest.Resolved(t, func(p *job.Params) { p.Partitions, p.Verify = 3, verify })
			res, err := Map(ctx, st, &job.Spec{Params: p}, worktest.WholeChunk(3, in))
			if err != nil {
				t.Fatal(err)
			}
			// Documents a, e, <file>:6 and a2; e has no shingle; lines 3, 4
			// and 7 are rejected.
			if res.Chunk != 3 || res.Docs != 4 || res.Empty != 1 || res.Rejected != 3 || res.Shingles != 2+0+1+2 ||
				res.BandRecords != int64(3*p.Bands) || res.InputBytes != int64(len(mapInput)) || res.TextBytes != 28+0+16+32 {
				t.Errorf("result %+v", res)
			}
			docs, err := pqfile.Read[records.DocRecord](ctx, st, res.DocFile.Name, &res.DocFile)
			if err != nil {
				t.Fatal(err)
			}
			want := []records.DocRecord{
				{Doc: job.Ordinal(3, 0), ID: "a", Line: 1, Tokens: 6, Shingles: 2},
				{Doc: job.Ordinal(3, 1), ID: "e", Line: 2},
				{Doc: job.Ordinal(3, 2), ID: in + ":6", Line: 6, Tokens: 3, Shingles: 1},
				{Doc: job.Ordinal(3, 3), ID: "a2", Line: 8, Tokens: 6, Shingles: 2},
			}
			for i := range docs {
				docs[i].File, docs[i].Offset, docs[i].Bytes = "", 0, 0
			}
			if !slices.Equal(docs, want) {
				t.Errorf("docs\n%+v\nwant\n%+v", docs, want)
			}
			rejects, err := pqfile.Read[records.RejectRecord](ctx, st, res.RejectFile.Name, res.RejectFile)
			if err != nil {
				t.Fatal(err)
			}
			var lines []int64
			for _, r := range rejects {
				lines = append(lines, r.Line)
				if r.Chunk != 3 || r.File != in || r.Reason == "" {
					t.Errorf("reject %+v", r)
				}
			}
			if !slices.Equal(lines, []int64{3, 4, 7}) {
				t.Errorf("rejected lines %v, want 3 4 7", lines)
			}
			// The result counts them by the kind of their reason.
			kinds := map[string]int64{}
			for _, r := range rejects {
				kinds[RejectKind(r.Reason)]++
			}
			if !maps.Equal(res.RejectReasons, kinds) || len(kinds) != 3 {
				t.Errorf("reject reasons %v, want %v (three kinds)", res.RejectReasons, kinds)
			}

			// Band records: one per band for each document with shingles,
			// in the partition of their key, sorted; a and a2 have one set
			// and so the same keys and fingerprint.
			bands := readRunFiles(t, st, res, p.Partitions)
			byDoc := map[int64][]records.BandRecord{}
			for _, b := range bands {
				byDoc[b.Doc] = append(byDoc[b.Doc], b)
			}
			if len(byDoc) != 3 || len(byDoc[job.Ordinal(3, 1)]) != 0 {
				t.Errorf("band records for %d documents (the empty one: %d)", len(byDoc), len(byDoc[job.Ordinal(3, 1)]))
			}
			same := func(x, y []records.BandRecord) bool {
				slices.SortFunc(x, workfile.CompareBand)
				slices.SortFunc(y, workfile.CompareBand)
				for i := range x {
					if x[i].Key != y[i].Key || x[i].FPHi != y[i].FPHi || x[i].FPLo != y[i].FPLo {
						return false
					}
				}
				return len(x) == len(y)
			}
			if !same(byDoc[job.Ordinal(3, 0)], byDoc[job.Ordinal(3, 3)]) {
				t.Error("a and a2 have one shingle set but different band records")
			}
			if same(byDoc[job.Ordinal(3, 0)], byDoc[job.Ordinal(3, 2)]) {
				t.Error("a and the third document have different sets but the same band records")
			}

			// Signatures: a slot per document, the empty one without a
			// record; shingle sets stored for exact verification only.
			sigs := readSigs(t, st, res.SigFile, p)
			if len(sigs) != 4 || sigs[1] != nil {
				t.Fatalf("%d signature slots, the empty document's %v", len(sigs), sigs[1])
			}
			for i, r := range sigs {
				if r == nil {
					continue
				}
				if r.ID != docs[i].ID || len(r.Sig) != 4*p.K || (len(r.Shingles) == 8*int(docs[i].Shingles)) != (verify == "exact") {
					t.Errorf("slot %d: id %s, %d signature bytes, %d shingle bytes", i, r.ID, len(r.Sig), len(r.Shingles))
				}
			}

			// Run again: the same files.
			again, err := Map(ctx, st, &job.Spec{Params: p}, worktest.WholeChunk(3, in))
			if err != nil {
				t.Fatal(err)
			}
			again.Seconds = res.Seconds
			if again.DocFile != res.DocFile || again.SigFile != res.SigFile || *again.RejectFile != *res.RejectFile || !mapsEqual(again.BandFiles, res.BandFiles) {
				t.Errorf("a second run wrote other files:\n%+v\n%+v", again, res)
			}
		})
	}
}

func mapsEqual(a, b map[int]fileinfo.Info) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readSigs reads every slot of a record file as verify does; nil for an
// empty slot.
func readSigs(t *testing.T, st storage.Opener, info fileinfo.Info, p job.Params) []*sigfile.Record {
	t.Helper()
	r, done, err := index.OpenRecords(context.Background(), st, info, p)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	out := make([]*sigfile.Record, r.Len())
	for i := range out {
		rec, ok, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out[i] = &rec
		}
	}
	return out
}

// TestMapStrictAndUnreadable checks that with --strict a rejected record
// fails the task, and that without it an unreadable file is recorded as a
// reject while the documents of the chunk's other pieces are kept.
func TestMapStrictAndUnreadable(t *testing.T) {
	ctx := context.Background()
	in := worktest.WriteTemp(t, "in.jsonl", mapInput)
	good := worktest.WriteTemp(t, "good.jsonl", `{"id":"g","text":"a b c d e f g"}`+"\n")
	bad := worktest.WriteTemp(t, "bad.jsonl.gz", "this is not gzip data at all")

	p := worktest.Resolved(t, func(p *job.Params) { p.Strict = true })
	if _, err := Map(ctx, worktest.NewStore(t), &job.Spec{Params: p}, worktest.WholeChunk(0, in)); err == nil || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("strict map of rejected records: err = %v", err)
	}
	if _, err := Map(ctx, worktest.NewStore(t), &job.Spec{Params: p}, worktest.WholeChunk(0, good, bad)); err == nil {
		t.Error("strict map of an unreadable file succeeded")
	}

	p.Strict = false
	st := worktest.NewStore(t)
	res, err := Map(ctx, st, &job.Spec{Params: p}, worktest.WholeChunk(0, bad, good))
	if err != nil {
		t.Fatal(err)
	}
	if res.Docs != 1 || res.Rejected != 1 || res.RejectFile == nil || res.UnreadFiles != 1 || res.UnreadBytes != int64(len("this is not gzip data at all")) {
		t.Fatalf("result %+v", res)
	}
	rejects, err := pqfile.Read[records.RejectRecord](ctx, st, res.RejectFile.Name, res.RejectFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rejects) != 1 || rejects[0].File != bad {
		t.Errorf("rejects %+v, want one for %s", rejects, bad)
	}

	// A chunk without rejects writes no reject file.
	res, err = Map(ctx, worktest.NewStore(t), &job.Spec{Params: p}, worktest.WholeChunk(0, good))
	if err != nil || res.RejectFile != nil || res.Rejected != 0 {
		t.Errorf("clean chunk: %+v, %v", res, err)
	}
}

// TestMapOwnFailure fails the writing of the task's own files in the
// middle of a piece (its first band run, with runs of a few bytes of
// text): the task fails with that error, and does not take it for the
// rest of the input unreadable.
func TestMapOwnFailure(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("word ", 250) // past the run's 1,024 bytes of text
	good := worktest.WriteTemp(t, "good.jsonl", `{"id":"g","text":"`+long+`"}`+"\n"+`{"id":"h","text":"h i j k l m n"}`+"\n")
	f, err := faults.Parse("deny@create:"+job.BandRunsDir+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := worktest.Resolved(t, func(p *job.Params) { p.ChunkBytes = 1 << 10 })
	res, err := Map(ctx, f.FS(worktest.NewStore(t)), &job.Spec{Params: p}, worktest.WholeChunk(0, good))
	if !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), good) {
		t.Fatalf("map with its band runs denied: %+v, %v; want the injected error naming %s", res, err, good)
	}
}

// TestMapFileGone plans a file and deletes it before its map task: the
// task lists it as an unreadable reject at offset -1 and counts it, the
// same as a file that could not be read at planning.
func TestMapFileGone(t *testing.T) {
	ctx := context.Background()
	gone := worktest.WriteTemp(t, "gone.jsonl", `{"id":"x","text":"a b c d e f"}`+"\n")
	good := worktest.WriteTemp(t, "good.jsonl", `{"id":"g","text":"a b c d e f g"}`+"\n")
	chunk := worktest.WholeChunk(0, gone, good)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	st := worktest.NewStore(t)
	res, err := Map(ctx, st, &job.Spec{Params: worktest.Resolved(t, func(*job.Params) {})}, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if res.Docs != 1 || res.Rejected != 1 || res.UnreadFiles != 1 {
		t.Fatalf("result %+v, want 1 doc, 1 reject, 1 unread file", res)
	}
	rejects, err := pqfile.Read[records.RejectRecord](ctx, st, res.RejectFile.Name, res.RejectFile)
	if err != nil || len(rejects) != 1 || rejects[0].File != gone || rejects[0].Offset != -1 || !strings.HasPrefix(rejects[0].Reason, "unreadable") {
		t.Fatalf("rejects %+v (%v), want one unreadable reject for %s at offset -1", rejects, err, gone)
	}
}

// TestMapDamagedRange maps a WET file whose first record's Content-Length
// is 10 bytes too long: the reader skips that record to the next header,
// and the map result counts one damaged range of its length.
func TestMapDamagedRange(t *testing.T) {
	record := func(id, body string, length int) string {
		return fmt.Sprintf("WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: http://example.com/%s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", id, id, length, body)
	}
	b1, b2 := "alpha beta gamma delta epsilon zeta", "eta theta iota kappa lambda mu nu"
	path := worktest.WriteTemp(t, "damaged.warc.wet", record("a", b1, len(b1)+10)+record("b", b2, len(b2)))
	res, err := Map(context.Background(), worktest.NewStore(t), &job.Spec{Params: worktest.Resolved(t, func(*job.Params) {})}, worktest.WholeChunk(0, path))
	if err != nil {
		t.Fatal(err)
	}
	if res.Docs != 1 || res.Rejected != 1 || res.DamagedRanges != 1 || res.DamagedBytes <= 0 {
		t.Fatalf("result %+v: want record b read, record a rejected as one damaged range", res)
	}
}

// readRunFiles reads every record of a map result's band run files,
// checking that each partition's are sorted and of that partition.
func readRunFiles(t *testing.T, st storage.Opener, res *job.MapResult, partitions int) []records.BandRecord {
	t.Helper()
	var out []records.BandRecord
	for run, info := range res.BandRunFiles {
		if info.Name != job.BandRunWorkFile(res.Chunk, run) {
			t.Errorf("run %d of chunk %d in %s", run, res.Chunk, info.Name)
		}
		r, err := workfile.LoadBandRun(context.Background(), st, info, res.Chunk, 0, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		for part := range partitions {
			recs, err := r.Part(part)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				if bands.Partition(uint64(rec.Key), partitions) != part {
					t.Errorf("%s: record %+v in partition %d", info.Name, rec, part)
				}
			}
			if !slices.IsSortedFunc(recs, workfile.CompareBand) {
				t.Errorf("%s: partition %d not sorted", info.Name, part)
			}
			out = append(out, recs...)
		}
	}
	return out
}

// TestMapInputChangedType plans a chunk of one 55-byte file, then changes
// the file before its map task: swapped for a named pipe, for a link to
// /dev/zero (a device that reads for ever), removed, or a directory in
// its place already when the job was planned (a file that could not be
// read then, as a file without read permission). The task never opens the
// pipe or the device: it lists the file in rejects/ with a reason naming
// what it is, and counts the file's planned 55 bytes as unread.
func TestMapInputChangedType(t *testing.T) {
	line := `{"id":"x","text":"a b c d e f g h i j k l m n o p qq"}` + "\n"
	if len(line) != 55 {
		t.Fatalf("the line is %d bytes", len(line))
	}
	tests := []struct {
		name   string
		before func(path string) error // before planning
		after  func(path string) error // after planning
		reason string                  // the reject's reason starts with it
	}{
		{"swapped for a FIFO", nil, func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return syscall.Mkfifo(p, 0o644)
		}, "not a regular file: named pipe (FIFO)"},
		{"swapped for a link to /dev/zero", nil, func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("/dev/zero", p)
		}, "not a regular file: character device"},
		{"removed", nil, os.Remove, "unreadable"},
		{"unreadable when planned", func(p string) error {
			// Its size taken, then a directory in its place: planning
			// cannot read it, as it could not read a file it has no
			// permission for.
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, nil, "not a regular file: directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := worktest.WriteTemp(t, "in.jsonl", line)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			in := job.Input{Path: path, Kind: formats.KindJSONL, Size: st.Size(), ModTime: st.ModTime().UnixNano()}
			if tt.before != nil {
				if err := tt.before(path); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := job.MakePlan(ctx, []job.Input{in}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				if err := tt.after(path); err != nil {
					t.Fatal(err)
				}
			}
			store := worktest.NewStore(t)
			type result struct {
				res *job.MapResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := Map(ctx, store, &job.Spec{Params: worktest.Resolved(t, func(*job.Params) {})}, plan.Chunks[0])
				done <- result{res, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the map task blocked")
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.res.Docs != 0 || r.res.Rejected != 1 || r.res.UnreadFiles != 1 || r.res.UnreadBytes != 55 {
				t.Fatalf("result %+v, want 1 reject, 1 unread file of 55 bytes", r.res)
			}
			rejects, err := pqfile.Read[records.RejectRecord](ctx, store, r.res.RejectFile.Name, r.res.RejectFile)
			if err != nil || len(rejects) != 1 || rejects[0].File != path || rejects[0].Offset != -1 || !strings.HasPrefix(rejects[0].Reason, tt.reason) {
				t.Fatalf("rejects %+v (%v), want one for %s at offset -1 whose reason starts %q", rejects, err, path, tt.reason)
			}
		})
	}
}
