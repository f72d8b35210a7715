package control

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/pkg/shingle"
)

// Giant-cluster rule: a cluster of at least giantClusterSize documents, or
// of more than giantClusterFraction of the corpus (and more than 10), is
// most likely templated pages chained together rather than copies.
const (
	giantClusterSize     = 1000
	giantClusterFraction = 0.01
)

// boundWarnings name the buckets and clusters whose pairs were bounded.
func boundWarnings(man *manifest.Manifest, s *stage.ClusterStats, p job.Params) []string {
	var out []string
	if man.Counts.BoundedBuckets > 0 {
		b := man.BoundedBuckets[0]
		out = append(out, fmt.Sprintf("%d band buckets held more than --max-bucket %d documents; %d of their pairs were not compared "+
			"(the largest: band %d, key %d, %d documents, the first document %d; each was compared with the bucket's %d first documents)",
			man.Counts.BoundedBuckets, p.MaxBucket, man.Counts.NotCompared, b.Band, b.Key, b.Docs, b.FirstDoc, b.Hubs))
	}
	for _, b := range s.Bounded {
		out = append(out, fmt.Sprintf("cluster %d (%d documents, kept: %s) has %d pairs, more than --max-cluster-pairs %d: "+
			"pairs/ lists only the %d pairs of its kept document, %d are not listed",
			b.Cluster, b.Size, b.KeptID, b.Pairs, p.MaxClusterPairs, b.Listed, b.NotListed))
	}
	if n := s.BoundedClusters - int64(len(s.Bounded)); n > 0 {
		out = append(out, fmt.Sprintf("%d more clusters were bounded the same way (see counts.pairs_not_listed)", n))
	}
	return out
}

func giantClusterWarning(s *stage.ClusterStats, docs int64) string {
	if len(s.Top) == 0 {
		return ""
	}
	big := s.Top[0]
	if big.Size < giantClusterSize && (big.Size <= 10 || float64(big.Size) <= giantClusterFraction*float64(docs)) {
		return ""
	}
	return fmt.Sprintf("cluster %d holds %d documents (%.1f%% of the corpus, kept: %s): near-duplicates may be chained through templated pages; check it before dropping documents",
		big.Cluster, big.Size, 100*float64(big.Size)/float64(max(docs, 1)), big.KeptID)
}

// Script rules: a job warns when more than thinShare of its documents with
// shingles are thin, or more than otherShare are of scripts the tokenizer
// has no rule for, or (with --tokenizer words-only) more than otherShare
// are of scripts written without spaces.
const (
	thinShare  = 0.2
	otherShare = 0.01
)

// scriptWarnings say when many documents have too few shingles, or are in
// scripts the tokenizer does not cut as it should.
func scriptWarnings(man *manifest.Manifest, p job.Params) []string {
	var out []string
	docs := man.Counts.Docs - man.Counts.Empty
	if docs <= 0 {
		return nil
	}
	share := func(n int64) float64 { return float64(n) / float64(docs) }
	if share(man.Counts.Thin) > thinShare {
		var by []string
		for _, s := range man.Scripts {
			if s.Thin > 0 && len(by) < 4 {
				by = append(by, fmt.Sprintf("%s %d of %d", s.Script, s.Thin, s.Docs))
			}
		}
		more := "fewer --words per shingle give them more"
		if p.CharGrams > 0 {
			more = "a shorter --char-grams gives them more"
		}
		out = append(out, fmt.Sprintf("%d of %d documents (%.0f%%) are thin, with fewer than %d shingles (%s): their near copies are found only when nearly identical; %s",
			man.Counts.Thin, docs, 100*share(man.Counts.Thin), job.ThinShingles, strings.Join(by, ", "), more))
	}
	var other, unspaced int64
	var names []string
	for _, s := range man.Scripts {
		switch s.Script {
		case shingle.ScriptOther.String():
			other += s.Docs
		case shingle.ScriptHan.String(), shingle.ScriptKana.String(), shingle.ScriptHangul.String(), shingle.ScriptThai.String(),
			shingle.ScriptLao.String(), shingle.ScriptKhmer.String(), shingle.ScriptMyanmar.String(), shingle.ScriptTibetan.String(),
			shingle.ScriptBopomofo.String():
			unspaced += s.Docs
			names = append(names, s.Script)
		}
	}
	if share(other) > otherShare {
		out = append(out, fmt.Sprintf("%d documents (%.1f%%) are mostly in scripts neardup has no rule for: they are cut into words at spaces and punctuation, which some of them do not use",
			other, 100*share(other)))
	}
	if p.Tokenizer == job.TokenizeWordsOnly && p.CharGrams == 0 && share(unspaced) > otherShare {
		out = append(out, fmt.Sprintf("%d documents (%.1f%%) are mostly in scripts written without spaces (%s), but --tokenizer words-only makes one token of each run of letters, a whole clause: "+
			"their near copies are mostly missed; --tokenizer scripts makes a token of each character",
			unspaced, 100*share(unspaced), strings.Join(names, ", ")))
	}
	return out
}

// duplicateIDWarning says that documents of the job share ids, naming a
// few; "" when none do.
func duplicateIDWarning(n int64, examples []string) string {
	if n == 0 {
		return ""
	}
	quoted := make([]string, len(examples))
	for i, id := range examples {
		quoted[i] = strconv.Quote(id)
	}
	such := ""
	if len(quoted) > 0 {
		such = " (such as " + strings.Join(quoted, ", ") + ")"
	}
	return fmt.Sprintf("%d documents have the id of another document of the job%s (counts.duplicate_ids): "+
		"a join of the outputs with a corpus on id (SEMI JOIN … USING (id)) matches each of them more than once; doc, the ordinal, is unique",
		n, such)
}

// notRegularWarning names the files under the inputs that planning found
// not to be regular files (the first few), "" when there are none.
func notRegularWarning(skipped []job.Skipped) string {
	var names []string
	for _, sk := range skipped {
		if sk.Rejected {
			names = append(names, sk.Path+" ("+sk.Reason+")")
		}
	}
	if len(names) == 0 {
		return ""
	}
	list := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		list += ", …"
	}
	return fmt.Sprintf("%d files under the inputs are not regular files (named pipes, sockets or devices): they were not read, "+
		"and are listed in %s and skipped_inputs: %s", len(names), job.PlannedRejectFile, list)
}

// lossWarnings say what input was not read, or not as planned: files or
// pieces not read to their end, damaged ranges skipped (with the rows
// known lost), files changed since planning (the first few named).
func lossWarnings(c manifest.Counts, changed []string) []string {
	var out []string
	if len(changed) > 0 {
		names := strings.Join(changed[:min(len(changed), 5)], ", ")
		if len(changed) > 5 {
			names += ", …"
		}
		out = append(out, fmt.Sprintf("%d input files changed (size or modification time) after the job was planned: %s; "+
			"they were read in the pieces planned for them, so what was added or changed since may be missing or read in part "+
			"(see changed_inputs in the manifest; run the job again with --overwrite to read them as they are)", len(changed), names))
	}
	if c.UnreadFiles > 0 {
		out = append(out, fmt.Sprintf("%d input files or pieces (%d bytes) could not be read to their end: listed in rejects/ as \"unreadable\", their documents are missing",
			c.UnreadFiles, c.UnreadBytes))
	}
	if c.DamagedRanges > 0 {
		out = append(out, fmt.Sprintf("%d damaged ranges of input (%d bytes, %d rows known) were skipped: listed in rejects/, their documents are missing",
			c.DamagedRanges, c.DamagedBytes, c.DamagedRows))
	}
	return out
}

// keepWarning says how many documents had no value for the --keep rule
// to rank them by (they rank after every document that has one), and why
// for the first, or "".
func keepWarning(maps []job.MapResult, p job.Params) string {
	var n, docs int64
	why := ""
	for _, m := range maps {
		n += m.KeepUnranked
		docs += m.Docs
		if why == "" {
			why = m.KeepProblem
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("--keep %s: %d of %d documents have no value to rank by, and rank after every document that has one (the first: %s)",
		p.Keep, n, docs, why)
}
