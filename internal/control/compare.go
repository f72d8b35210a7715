package control

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// MethodSummary is one method's side of a comparison.
type MethodSummary struct {
	Method   string `json:"method"`
	Params   string `json:"params"`
	Pairs    int64  `json:"pairs"`
	Only     int64  `json:"only_this_method"`
	Checked  int64  `json:"candidates_checked"`
	SigPass  int64  `json:"signature_passed"`
	SigExact int64  `json:"signature_passed_exact"`
	// Precision is the share of the pairs the signatures alone accept
	// whose exact Jaccard reaches the threshold.
	Precision   float64 `json:"signature_precision"`
	Seconds     float64 `json:"seconds"`
	SigBytes    float64 `json:"signature_bytes_per_doc"`
	BandRecords float64 `json:"band_records_per_doc"`
	Clusters    int64   `json:"clusters"`
	Duplicates  int64   `json:"duplicates"`
}

// Comparison is what `coordinator compare` writes as comparison.json.
type Comparison struct {
	Threshold float64         `json:"threshold"`
	Docs      int64           `json:"docs"`
	Both      int64           `json:"pairs_found_by_both"`
	Union     int64           `json:"pairs_found_by_either"`
	Methods   []MethodSummary `json:"methods"`
}

// Compare runs the same job with MinHash and with SimHash (into
// <out>/minhash and <out>/simhash, with exact verification so that each
// method's signature precision is measured) and compares what they found.
func Compare(ctx context.Context, cfg Config) (*Comparison, error) {
	base := cfg.Out
	cmp := &Comparison{Threshold: cfg.Params.Threshold}
	var sets []map[[2]int64]bool
	for _, method := range []job.Method{job.MethodMinHash, job.MethodSimHash} {
		c := cfg
		c.Out = filepath.Join(base, method.String())
		c.Params.Method = method
		c.Params.Verify = job.VerifyExact
		man, err := Run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		st, err := storage.NewDir(c.Out)
		if err != nil {
			return nil, err
		}
		set, err := pairSet(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		sets = append(sets, set)
		k := man.Counts
		s := MethodSummary{
			Method: method.String(), Pairs: k.Pairs, Checked: k.UniquePairs, SigPass: k.SigPassed, SigExact: k.SigPassedExact,
			Seconds: man.Seconds, Clusters: k.Clusters, Duplicates: k.Duplicates,
		}
		if k.SigPassed > 0 {
			s.Precision = float64(k.SigPassedExact) / float64(k.SigPassed)
		}
		if docs := k.Docs - k.Empty; docs > 0 {
			s.BandRecords = float64(k.BandRecords) / float64(docs)
			s.SigBytes = 8
			if method == job.MethodMinHash {
				s.SigBytes = float64(4 * man.Params.K)
			}
		}
		if method == job.MethodMinHash {
			s.Params = fmt.Sprintf("K=%d b=%d r=%d", man.Params.K, man.Params.Bands, man.Params.Rows)
		} else {
			s.Params = fmt.Sprintf("k=%d blocks=%d", man.Params.Hamming, man.Params.Bands)
		}
		cmp.Docs = k.Docs
		cmp.Methods = append(cmp.Methods, s)
	}
	for p := range sets[0] {
		if sets[1][p] {
			cmp.Both++
		}
	}
	cmp.Union = int64(len(sets[0])+len(sets[1])) - cmp.Both
	for i := range cmp.Methods {
		cmp.Methods[i].Only = int64(len(sets[i])) - cmp.Both
	}
	st, err := storage.NewDir(base)
	if err != nil {
		return nil, err
	}
	if err := writeJSON(ctx, st, "comparison.json", cmp); err != nil {
		return nil, err
	}
	return cmp, nil
}

// pairSet reads the verified pairs of an output.
func pairSet(ctx context.Context, st *storage.Dir) (map[[2]int64]bool, error) {
	names, err := st.List(ctx, job.PairsDir)
	if err != nil {
		return nil, err
	}
	set := map[[2]int64]bool{}
	for _, n := range names {
		err := pqfile.Stream(ctx, st, n, nil, 4096, func(rows []records.Pair) error {
			for _, r := range rows {
				set[[2]int64{r.A, r.B}] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return set, nil
}

// WriteComparison prints a comparison as a table.
func WriteComparison(w io.Writer, c *Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%d documents, threshold %.2f: %d pairs found by either method, %d by both\t\n\n", c.Docs, c.Threshold, c.Union, c.Both)
	fmt.Fprintln(tw, "method\tparams\tpairs\tonly this\tsignature precision\tseconds\tsignature bytes/doc\tband records/doc\tclusters\tduplicates\t")
	for _, m := range c.Methods {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f (%d/%d)\t%.2f\t%.0f\t%.2f\t%d\t%d\t\n",
			m.Method, m.Params, m.Pairs, m.Only, m.Precision, m.SigExact, m.SigPass, m.Seconds, m.SigBytes, m.BandRecords, m.Clusters, m.Duplicates)
	}
	return tw.Flush()
}
