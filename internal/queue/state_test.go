package queue

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestState checks the job state on an embedded server: get, create,
// delete, and Follow's replay, mark and later puts.
func TestState(t *testing.T) {
	ctx, q := embeddedQueue(t)
	s, err := q.State(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "r.map.done.000001"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a missing key: %v, want ErrNotFound", err)
	}
	for _, k := range []string{"r.map.done.000001", "r.map.failed.000002", "r.reduce.done.000000"} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, "r.map.done.000001", nil); !errors.Is(err, ErrExists) {
		t.Fatalf("create of an existing key: %v, want ErrExists", err)
	}
	if err := s.Delete(ctx, "r.map.failed.000002"); err != nil {
		t.Fatal(err)
	}
	updates, err := s.Follow(ctx, "r.map.")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for u := range updates {
		if u.Replayed {
			break
		}
		got = append(got, u.Key)
	}
	if len(got) != 1 || got[0] != "r.map.done.000001" {
		t.Fatalf("replay %v, want only r.map.done.000001 (deleted keys and other prefixes are not sent)", got)
	}
	if err := s.Create(ctx, "r.map.done.000003", []byte("v3")); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-updates:
		if u.Key != "r.map.done.000003" || string(u.Value) != "v3" {
			t.Fatalf("update %+v, want r.map.done.000003 = v3", u)
		}
	case <-ctx.Done():
		t.Fatal("no update after the replay")
	}
	// DeletePrefix clears one stage's keys and no other's.
	if err := s.DeletePrefix(ctx, "r.map."); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"r.map.done.000001": false, "r.map.done.000003": false, "r.reduce.done.000000": true} {
		if _, err := s.Get(ctx, key); (err == nil) != want {
			t.Errorf("after DeletePrefix(r.map.): %s present %v, want %v", key, err == nil, want)
		}
	}
	if err := s.DeletePrefix(ctx, "nothing."); err != nil {
		t.Errorf("DeletePrefix of no key: %v", err)
	}
	if err := q.DeleteState(ctx, "job1"); err != nil {
		t.Fatal(err)
	}
}

// TestFollowBucketDeleted deletes a job's state bucket while Follow
// watches it (another coordinator took the job over and deleted it):
// Follow's channel must close, not panic, so that its reader can say why.
func TestFollowBucketDeleted(t *testing.T) {
	ctx, q := embeddedQueue(t)
	s, err := q.State(ctx, "job2")
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	updates, err := s.Follow(fctx, "r.map.")
	if err != nil {
		t.Fatal(err)
	}
	if u := <-updates; !u.Replayed {
		t.Fatalf("first update %+v, want the replay's mark", u)
	}
	if err := q.DeleteState(ctx, "job2"); err != nil {
		t.Fatal(err)
	}
	for range updates {
	}
	if fctx.Err() != nil {
		t.Errorf("Follow went on for %v after its bucket was deleted", 30*time.Second)
	}
}
