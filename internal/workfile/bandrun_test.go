package workfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestBandRunRoundTrip writes band run files of chunks with and without
// records in every partition and reads each partition back.
func TestBandRunRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		name              string
		chunk, docs, part int
	}{
		{"empty", 0, 0, 4},
		{"one document", 5, 1, 4},
		{"many partitions, some empty", 1<<20 - 1, 30, 64},
		{"one partition", 2, 200, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			parts := randomBands(r, tt.chunk, tt.docs, 16, tt.part)
			info, err := WriteBandRun(ctx, st, job.BandRunWorkFile(tt.chunk, 0), tt.chunk, parts)
			if err != nil {
				t.Fatal(err)
			}
			if info.Rows != int64(16*tt.docs) {
				t.Errorf("%d rows, want %d", info.Rows, 16*tt.docs)
			}
			rr, err := LoadBandRun(ctx, st, info, tt.chunk, 0, math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			for p := range tt.part + 1 { // and one past the last
				got, err := rr.Part(p)
				if err != nil {
					t.Fatal(err)
				}
				var want []records.BandRecord
				if p < tt.part {
					want = parts[p]
				}
				if len(got) != len(want) || len(want) > 0 && !slices.Equal(got, want) {
					t.Errorf("partition %d: %d records read, %d written", p, len(got), len(want))
				}
			}
			// A range of partitions, as a reduce task loads it: the others
			// read as empty.
			first, last := tt.part/3, tt.part/2
			rr, err = LoadBandRun(ctx, st, info, tt.chunk, first, last)
			if err != nil {
				t.Fatal(err)
			}
			for p := range tt.part {
				got, err := rr.Part(p)
				if err != nil {
					t.Fatal(err)
				}
				if in := p >= first && p <= last; in && !slices.Equal(got, parts[p]) || !in && len(got) > 0 {
					t.Errorf("partitions %d to %d loaded: partition %d: %d records read, %d written", first, last, p, len(got), len(parts[p]))
				}
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		st := newStore(t)
		parts := randomBands(r, 3, 10, 4, 2)
		if _, err := WriteBandRun(ctx, st, "x.bnd", 4, parts); err == nil {
			t.Error("records of chunk 3 written as chunk 4's")
		}
		parts[0][0], parts[0][1] = parts[0][1], parts[0][0]
		if _, err := WriteBandRun(ctx, st, "y.bnd", 3, parts); err == nil {
			t.Error("unsorted records written")
		}
	})
}

// TestBandRunDamage damages a band run file in each of its parts and
// checks that reading it fails with an error naming the file and the
// offset of the damage, never with wrong records.
func TestBandRunDamage(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	st := newStore(t)
	parts := randomBands(r, 7, 50, 16, 4)
	name := job.BandRunWorkFile(7, 0)
	info, err := WriteBandRun(ctx, st, name, 7, parts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(st.Root(), name)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := LoadBandRun(ctx, st, info, 7, 0, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	block1 := rr.blocks[1]
	footer := int64(len(orig)) - int64(bandRunTrailer) - 3
	for _, tt := range []struct {
		name   string
		damage func([]byte) []byte
		info   func(fileinfo.Info) fileinfo.Info
		at     int64 // the offset the error names
	}{
		{"a block", func(b []byte) []byte { b[block1.offset+5] ^= 1; return b }, nil, block1.offset},
		{"the footer", func(b []byte) []byte { b[footer] ^= 1; return b }, nil, -1},
		{"the trailer's magic", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, nil, int64(len(orig) - len(bandRunMagic))},
		{"cut short", func(b []byte) []byte { return b[:len(b)-10] }, func(i fileinfo.Info) fileinfo.Info { i.Bytes -= 10; return i }, int64(len(orig) - 10 - len(bandRunMagic))},
		{"cut, size as written", func(b []byte) []byte { return b[:len(b)-10] }, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, tt.damage(slices.Clone(orig)), 0o644); err != nil {
				t.Fatal(err)
			}
			in := info
			if tt.info != nil {
				in = tt.info(info)
			}
			rr, err := LoadBandRun(ctx, st, in, 7, 0, math.MaxInt)
			if err == nil {
				for p := range 4 {
					if _, err = rr.Part(p); err != nil {
						break
					}
				}
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "at offset") {
				t.Fatalf("got %v, want a corrupt file error naming %s and an offset", err, name)
			}
			if tt.at >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("at offset %d:", tt.at)) {
				t.Errorf("got %v, want offset %d", err, tt.at)
			}
		})
	}
}

// TestBandRunCounts reads band run files whose footer, checksums right,
// claims as many blocks, or a block as many records, as it has bytes: a
// block's entry takes 12 bytes at least and a record 11, so the reader
// refuses them as corrupt before allocating for them (40 bytes each).
func TestBandRunCounts(t *testing.T) {
	ctx := context.Background()
	const n = 1 << 20
	seal := func(blocks, foot []byte) []byte {
		data := append([]byte(bandRunMagic), blocks...)
		footOff := len(data)
		data = append(data, foot...)
		data = binary.LittleEndian.AppendUint64(data, uint64(footOff))
		data = binary.LittleEndian.AppendUint64(data, xxhash.Sum64(foot))
		return append(data, bandRunMagic...)
	}
	// A footer of n bytes claiming n blocks.
	manyBlocks := seal(nil, append(binary.AppendUvarint(nil, n), bytes.Repeat([]byte{1}, n)...))
	// One block of n bytes claiming n records.
	block := bytes.Repeat([]byte{1}, n)
	var foot []byte
	for _, v := range []uint64{1, 0, uint64(len(bandRunMagic)), n, n} {
		foot = binary.AppendUvarint(foot, v)
	}
	manyRecords := seal(block, binary.LittleEndian.AppendUint64(foot, xxhash.Sum64(block)))
	for _, tt := range []struct {
		name string
		data []byte
		rows int64
	}{
		{"blocks", manyBlocks, 0},
		{"records", manyRecords, n},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemFS()
			st.put("run.bnd", tt.data)
			checkAlloc(t, len(tt.data), 4, fuzzAllocSlack, func() {
				r, err := LoadBandRun(ctx, st, fileinfo.Info{Name: "run.bnd", Bytes: int64(len(tt.data)), Rows: tt.rows}, 0, 0, math.MaxInt)
				if err == nil {
					_, err = r.Part(0)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("got %v, want ErrCorrupt", err)
				}
			})
		})
	}
}
