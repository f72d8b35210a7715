// Command minhashlsh is the peer of neardup's benchmark: it finds the
// candidate near-duplicate pairs of a corpus with
// github.com/ekzhu/minhash-lsh, the way a typical user of that library
// would, so that scripts/bench-peers.sh can time both on the same input.
//
// It reads the corpus's gzipped (or plain) JSONL files ("id" and "text" of
// each line), shingles every text into word 5-grams (lower-cased,
// whitespace-separated words; a text of fewer words is one shingle),
// sketches each set with the library's MinHash (seed 42 and 128 hash
// functions, its command's defaults), adds every signature to the LSH
// index (NewMinhashLSH(128, threshold): the library chooses the bands and
// rows for the threshold), queries every document, and writes the
// distinct candidate pairs, "idA<TAB>idB" with idA < idB, to -out. It only
// estimates: candidates are not verified (neardup computes the exact
// Jaccard similarity of each).
//
//	go run . -threshold 0.8 -out /tmp/peer-pairs.tsv CORPUS_DIR
//
// It lives in its own module so that the library stays out of neardup's
// dependencies.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "minhashlsh:", err)
		os.Exit(1)
	}
}

func run() error {
	threshold := flag.Float64("threshold", 0.8, "Jaccard similarity threshold the index is tuned for")
	hashes := flag.Int("hashes", 128, "MinHash hash functions (the library command's default)")
	seed := flag.Int64("seed", 42, "MinHash seed (the library command's default)")
	words := flag.Int("words", 5, "words a shingle")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines that sketch and query")
	out := flag.String("out", "", "file of candidate pairs (required)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		return fmt.Errorf("-out and a corpus (files or directories) are required")
	}
	start := time.Now()
	ids, texts, err := readCorpus(flag.Args())
	if err != nil {
		return err
	}
	read := time.Since(start)

	t := time.Now()
	sigs := make([][]uint64, len(texts))
	parallel(len(texts), *workers, func(i int) {
		mh := minhashlsh.NewMinhash(*seed, *hashes)
		for _, s := range shingles(texts[i], *words) {
			mh.Push([]byte(s))
		}
		sigs[i] = mh.Signature()
		texts[i] = "" // the text is no longer needed
	})
	sketch := time.Since(t)

	t = time.Now()
	lsh := minhashlsh.NewMinhashLSH(*hashes, *threshold)
	for i, sig := range sigs {
		lsh.Add(i, sig)
	}
	lsh.Index()
	index := time.Since(t)

	t = time.Now()
	found := make([][]int, len(sigs)) // candidates of each document above it
	parallel(len(sigs), *workers, func(i int) {
		for _, key := range lsh.Query(sigs[i]) {
			if j := key.(int); j > i {
				found[i] = append(found[i], j)
			}
		}
		slices.Sort(found[i])
	})
	query := time.Since(t)

	t = time.Now()
	n, err := writePairs(*out, ids, found)
	if err != nil {
		return err
	}
	k, l := lsh.Params()
	slog.Info("done", "docs", len(ids), "candidate_pairs", n, "rows", k, "bands", l,
		"read_s", read.Seconds(), "sketch_s", sketch.Seconds(), "index_s", index.Seconds(),
		"query_s", query.Seconds(), "write_s", time.Since(t).Seconds(), "total_s", time.Since(start).Seconds())
	return nil
}

// shingles returns the distinct word n-grams of text.
func shingles(text string, n int) []string {
	w := strings.Fields(strings.ToLower(text))
	if len(w) == 0 {
		return nil
	}
	if len(w) < n {
		return []string{strings.Join(w, " ")}
	}
	seen := make(map[string]struct{}, len(w)-n+1)
	out := make([]string, 0, len(w)-n+1)
	for i := 0; i+n <= len(w); i++ {
		s := strings.Join(w[i:i+n], " ")
		if _, ok := seen[s]; !ok {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

// parallel calls f(i) for i in [0, n) on workers goroutines.
func parallel(n, workers int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int, 1024)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// readCorpus reads the ids and texts of every JSONL line of the given
// files and of the .jsonl and .jsonl.gz files of the given directories
// (names starting with _ or . skipped), in name order.
func readCorpus(args []string) (ids, texts []string, err error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".") &&
				(strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.gz")) {
				files = append(files, filepath.Join(a, name))
			}
		}
	}
	slices.Sort(files)
	for _, name := range files {
		if ids, texts, err = readFile(name, ids, texts); err != nil {
			return nil, nil, err
		}
	}
	return ids, texts, nil
}

func readFile(name string, ids, texts []string) ([]string, []string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		var doc struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		ids, texts = append(ids, doc.ID), append(texts, doc.Text)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return ids, texts, nil
}

// writePairs writes the candidate pairs, ids in order, and returns how
// many there are.
func writePairs(name string, ids []string, found [][]int) (int, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	n := 0
	for i, js := range found {
		for _, j := range js {
			a, b := ids[i], ids[j]
			if b < a {
				a, b = b, a
			}
			fmt.Fprintf(w, "%s\t%s\n", a, b)
			n++
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, f.Close()
}
