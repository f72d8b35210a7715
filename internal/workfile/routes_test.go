package workfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// randomRanges are ranges of slots files by key, about half the keys
// below keys holding rows in each.
func randomRanges(r *rand.Rand, slots []string, keys int) []map[int]fileinfo.Info {
	out := make([]map[int]fileinfo.Info, len(slots))
	for s, name := range slots {
		out[s] = map[int]fileinfo.Info{}
		var off int64
		for k := range keys {
			if r.IntN(2) == 0 {
				continue
			}
			rows := 1 + r.Int64N(100)
			out[s][k] = fileinfo.Info{Name: name, Rows: rows, Bytes: 20 * rows, Offset: off, Checksum: r.Uint64()}
			off += 20 * rows
		}
	}
	return out
}

// TestRoutesRoundTrip writes route tables and reads every window of
// them back: each key's entries are its ranges of each slot, in order,
// none beyond the table's keys.
func TestRoutesRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tt := range []struct{ slots, keys int }{{1, 1}, {1, 40}, {2, 7}, {6, 33}} {
		t.Run(fmt.Sprintf("%d-slots-%d-keys", tt.slots, tt.keys), func(t *testing.T) {
			var slots []string
			for s := range tt.slots {
				slots = append(slots, fmt.Sprintf("file-%d", s))
			}
			ranges := randomRanges(rng, slots, tt.keys)
			ranges[0][tt.keys-1] = fileinfo.Info{Name: slots[0], Rows: 1, Bytes: 20, Offset: 0} // the last key has rows
			name := fmt.Sprintf("routes-%d-%d", tt.slots, tt.keys)
			r, err := WriteRoutes(ctx, st, name, slots, ranges)
			if err != nil {
				t.Fatal(err)
			}
			if r.Keys != tt.keys || r.File.Bytes != int64(tt.keys)*routeBlock(tt.slots) {
				t.Fatalf("table %+v: want %d keys of %d slots", r, tt.keys, tt.slots)
			}
			for _, window := range []int{1, 3, tt.keys + 5} {
				for first := 0; first < tt.keys+2; first += window {
					w, err := LoadRoutes(ctx, st, r, first, first+window-1)
					if err != nil {
						t.Fatal(err)
					}
					for k := first - 1; k < first+window+1; k++ {
						got, err := w.Entries(k, nil)
						if err != nil {
							t.Fatalf("key %d: %v", k, err)
						}
						if k < first || k >= first+window || k >= tt.keys {
							if len(got) != 0 {
								t.Fatalf("key %d outside the window %d+%d: %v", k, first, window, got)
							}
							continue
						}
						for s := range slots {
							if got[s] != ranges[s][k] {
								t.Fatalf("key %d, slot %d: %+v, want %+v", k, s, got[s], ranges[s][k])
							}
						}
					}
				}
			}
		})
	}
	if r, err := WriteRoutes(ctx, st, "none", []string{"a", "b"}, []map[int]fileinfo.Info{{}, nil}); r != nil || err != nil {
		t.Errorf("no ranges: %+v, %v; want no table", r, err)
	}
	if _, err := os.Stat(st.Path("none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a table without ranges was written: %v", err)
	}
	if w, err := LoadRoutes(ctx, st, nil, 0, 10); err != nil {
		t.Error(err)
	} else if got, err := w.Entries(3, nil); len(got) != 0 || err != nil {
		t.Errorf("no table: %v, %v", got, err)
	}
}

// TestRoutesRefused checks that ranges a table cannot hold are refused
// when it is written.
func TestRoutesRefused(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	for _, tt := range []struct {
		name   string
		slots  []string
		ranges []map[int]fileinfo.Info
	}{
		{"another file", []string{"a"}, []map[int]fileinfo.Info{{0: {Name: "b", Rows: 1, Bytes: 1}}}},
		{"no rows", []string{"a"}, []map[int]fileinfo.Info{{0: {Name: "a", Bytes: 1}}}},
		{"negative key", []string{"a"}, []map[int]fileinfo.Info{{-1: {Name: "a", Rows: 1, Bytes: 1}}}},
		{"slots and ranges differ", []string{"a", "b"}, []map[int]fileinfo.Info{{0: {Name: "a", Rows: 1, Bytes: 1}}}},
	} {
		if r, err := WriteRoutes(ctx, st, "t", tt.slots, tt.ranges); err == nil {
			t.Errorf("%s: %+v, want an error", tt.name, r)
		}
	}
}

// TestRoutesCorrupt checks that a damaged, truncated or foreign table is
// refused as ErrCorrupt, naming the file and the key.
func TestRoutesCorrupt(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	slots := []string{job.EdgeFile(3), job.RequestFile(3)}
	write := func(name string) *job.Routes {
		ranges := randomRanges(rand.New(rand.NewPCG(9, 9)), slots, 20)
		ranges[0][19] = fileinfo.Info{Name: slots[0], Rows: 2, Bytes: 40}
		r, err := WriteRoutes(ctx, st, name, slots, ranges)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	block := routeBlock(len(slots))
	tests := []struct {
		name   string
		damage func(r *job.Routes, raw []byte) []byte
		want   string // in the error
	}{
		{"a flipped bit", func(_ *job.Routes, raw []byte) []byte { raw[5*block+9] ^= 1; return raw }, "key 5"},
		{"a flipped checksum", func(_ *job.Routes, raw []byte) []byte { raw[6*block-1] ^= 1; return raw }, "key 5"},
		{"truncated", func(_ *job.Routes, raw []byte) []byte { return raw[:len(raw)-1] }, "bytes"},
		{"two blocks swapped", func(_ *job.Routes, raw []byte) []byte {
			a, b := append([]byte(nil), raw[2*block:3*block]...), raw[3*block:4*block]
			copy(raw[2*block:], b)
			copy(raw[3*block:], a)
			return raw
		}, "key 2"},
		{"an entry of no rows", func(_ *job.Routes, raw []byte) []byte {
			entries := raw[7*block : 8*block-8]
			copy(entries[16:24], make([]byte, 8)) // rows 0, the rest kept
			if entries[8] == 0 {                  // an empty entry: give it bytes
				entries[8] = 1
			}
			copy(raw[8*block-8:8*block], binary.LittleEndian.AppendUint64(nil, routeSum(7, entries)))
			return raw
		}, "slot 0"},
		{"recorded as another size", func(r *job.Routes, raw []byte) []byte { r.File.Bytes--; return raw }, "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := write("t-" + tt.name)
			raw, err := os.ReadFile(st.Path(r.File.Name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(st.Path(r.File.Name), tt.damage(r, raw), 0o644); err != nil {
				t.Fatal(err)
			}
			err = readAllRoutes(ctx, st, r)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), r.File.Name) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrCorrupt naming %s and %q", err, r.File.Name, tt.want)
			}
		})
	}
}

// readAllRoutes reads every key of r, one window.
func readAllRoutes(ctx context.Context, st storage.Opener, r *job.Routes) error {
	w, err := LoadRoutes(ctx, st, r, 0, r.Keys-1)
	if err != nil {
		return err
	}
	for k := range r.Keys {
		if _, err := w.Entries(k, nil); err != nil {
			return err
		}
	}
	return nil
}
