package formats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// stopFixtures writes one file of every kind with many documents.
func stopFixtures(t *testing.T) []string {
	dir := t.TempDir()
	var jsonl, wet strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&jsonl, `{"id":"%d","text":"t"}`+"\n", i)
		wet.WriteString(conversion(fmt.Sprintf("<urn:%d>", i), "http://x/", "t"))
	}
	var rows []corpusRow
	for i := 0; i < 500; i++ {
		text := "t"
		rows = append(rows, corpusRow{ID: fmt.Sprint(i), Text: &text})
	}
	pq := dir + "/a.parquet"
	writeParquet(t, pq, rows, 500)
	return []string{
		writeFile(t, dir, "a.jsonl", []byte(jsonl.String())),
		writeFile(t, dir, "a.jsonl.gz", gzipMembers(t, jsonl.String())),
		writeFile(t, dir, "a.warc.wet", []byte(wet.String())),
		pq,
	}
}

func TestReadStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop here")
	for _, path := range stopFixtures(t) {
		kind, _ := DetectKind(path)
		n := 0
		err := Read(context.Background(), Piece{Path: path, Kind: kind, End: -1}, Options{}, func(Doc) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		}, func(Reject) error { return nil })
		if err != stop || n != 3 {
			t.Errorf("%s: err %v after %d docs", path, err, n)
		}
	}
}

func TestReadCancelled(t *testing.T) {
	for _, path := range stopFixtures(t) {
		kind, _ := DetectKind(path)
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := Read(ctx, Piece{Path: path, Kind: kind, End: -1}, Options{}, func(Doc) error {
			n++
			if n == 10 {
				cancel()
			}
			return nil
		}, func(Reject) error { return nil })
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) || n >= 500 {
			t.Errorf("%s: err %v after %d docs", path, err, n)
		}
	}
}
