package faults

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/storage"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr string
		rules   int
	}{
		{"", "", 0},
		{"panic@map/1", "", 1},
		{"fail@reduce/*; stall@create:bands/#2", "", 2},
		{"boom@map/1", "unknown action", 0},
		{"fail", "ACTION@POINT", 0},
		{"fail@map", "STAGE/INDEX", 0},
		{"fail@map/x", "bad index", 0},
		{"fail@map/1#0", "bad count", 0},
		{"panic@create:x", "file points take fail", 0},
		{"panic@commit:x", "file points take fail", 0},
	}
	for _, tt := range tests {
		s, err := Parse(tt.spec, nil)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) err = %v, want %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(s.rules) != tt.rules {
			t.Errorf("Parse(%q) = %d rules, %v", tt.spec, len(s.rules), err)
		}
	}
}

func TestFire(t *testing.T) {
	ctx := context.Background()
	s, err := Parse("fail@map/1#1; fail@create:candidates/; panic@verify/*; deny@create:pairs/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Task(ctx, "map", 0); err != nil {
		t.Fatalf("map/0: %v", err)
	}
	if err := s.Task(ctx, "map", 1); !errors.Is(err, ErrInjected) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("map/1 first: %v", err)
	}
	if err := s.Task(ctx, "map", 1); err != nil {
		t.Fatalf("map/1 second (limit 1): %v", err)
	}
	if err := s.Create(ctx, "candidates/part=00001.parquet"); !errors.Is(err, ErrInjected) {
		t.Fatalf("create: %v", err)
	}
	if err := s.Create(ctx, "pairs/chunk-000001.parquet"); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("deny: %v", err)
	}
	if err := s.Create(ctx, "docs/chunk-000001.parquet"); err != nil {
		t.Fatalf("create elsewhere: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("verify did not panic")
			}
		}()
		s.Task(ctx, "verify", 7)
	}()
	var none *Set
	if err := none.Task(ctx, "map", 1); err != nil {
		t.Fatal(err)
	}
}

func TestStallEndsWithContext(t *testing.T) {
	s, _ := Parse("stall@create:x", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Create(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stall returned %v", err)
	}
}

// TestFS checks that the storage wrapper applies creation rules and passes
// everything else through.
func TestFS(t *testing.T) {
	ctx := context.Background()
	dir, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var none *Set
	if none.FS(dir) != storage.FS(dir) {
		t.Fatal("a nil set must return the storage unchanged")
	}
	set, err := Parse("fail@create:pairs/; fail@commit:bands/", nil)
	if err != nil {
		t.Fatal(err)
	}
	fsys := set.FS(dir)
	tests := []struct {
		name    string
		wantErr bool
	}{
		{"pairs/chunk-000001.parquet", true},
		{"bands/part=00001/chunk-000001.parquet", true}, // written, then not committed
		{"docs/chunk-000001.parquet", false},
	}
	for _, tt := range tests {
		err := storage.WriteFile(ctx, fsys, tt.name, []byte("x"))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want an error: %v", tt.name, err, tt.wantErr)
		}
		if _, oerr := fsys.Open(ctx, tt.name); (oerr == nil) == tt.wantErr {
			t.Errorf("%s: open after write: %v", tt.name, oerr)
		}
	}
	// A failed commit leaves no temporary file behind.
	if left, err := dir.List(ctx, "bands"); err != nil || len(left) != 0 {
		t.Errorf("after a failed commit: %v %v", left, err)
	}
	if tmps, _ := filepath.Glob(dir.Path("bands/part=00001/*")); len(tmps) != 0 {
		t.Errorf("files left after a failed commit: %v", tmps)
	}
}
