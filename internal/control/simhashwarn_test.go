package control

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestSimHashRecallWarning checks when the job warns that SimHash finds
// under half of the pairs at its threshold, and what it advises.
func TestSimHashRecallWarning(t *testing.T) {
	tests := []struct {
		name      string
		method    job.Method
		hamming   int
		threshold float64
		want      []string // substrings; none means no warning
	}{
		{"minhash", "minhash", 3, 0.8, nil},
		{"default k at 0.8", "simhash", 3, 0.8, []string{"--hamming 3", "--threshold 0.8", "probability 0.0085", "9.7 bits",
			"--hamming 10 is the smallest that finds half (0.62; it makes 19% of unrelated pairs candidates), or use --method minhash"}},
		{"k=9 just short", "simhash", 9, 0.8, []string{"probability 0.49", "--hamming 10 is the smallest"}},
		{"k=10 finds half", "simhash", 10, 0.8, nil},
		{"near-copies", "simhash", 3, 0.97, nil}, // P(found) = 0.52
		{"k=3 at 0.95", "simhash", 3, 0.95, []string{"probability 0.31", "--hamming 4 is the smallest that finds half (0.50; it makes 0.073% of unrelated"}},
		{"none up to MaxK", "simhash", 3, 0.5, []string{"--threshold 0.5", "no --hamming up to 15 finds half (15: 0.33): use --method minhash"}},
		{"MaxK itself", "simhash", 15, 0.5, []string{"--hamming 15", "no --hamming up to 15"}},
		{"identical only", "simhash", 0, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := job.DefaultParams()
			p.Method, p.Hamming, p.Threshold = tc.method, tc.hamming, tc.threshold
			got := simhashRecallWarning(p)
			if (got == "") != (tc.want == nil) {
				t.Fatalf("warning %q, want one: %v", got, tc.want != nil)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("warning spans lines: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning lacks %q: %s", w, got)
				}
			}
		})
	}
}
