// Package report renders a job's manifest.json as a run report for people:
// one self-contained HTML page (report.html) with its charts inlined as
// SVG, and the same charts as separate SVG files. The report reads the
// manifest through package manifest, not from the pipeline that writes it.
package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/bands"
)

// The files Build returns, to be written beside manifest.json.
const (
	HTMLFile       = "report.html"
	SCurveFile     = "report-scurve.svg"
	SimilarityFile = "report-similarity.svg"
	ClustersFile   = "report-clusters.svg"
	StagesFile     = "report-stages.svg"
)

// Build renders the manifest (the bytes of manifest.json) as the report's
// files, by name: HTMLFile, a page that needs nothing else to be viewed,
// and the four charts it shows as SVG files (SCurveFile, SimilarityFile,
// ClustersFile, StagesFile). Equal manifests give equal files. It fails on
// a manifest that is not JSON of the expected shape, has invalid banding
// parameters, or has similarity histograms of different lengths.
func Build(data []byte) (map[string][]byte, error) {
	m, err := decode(data)
	if err != nil {
		return nil, err
	}
	charts := map[string][]byte{
		SCurveFile:     SCurveSVG([]bands.Params{m.Params.BandParams()}, m.Params.Threshold, "LSH S-curve: probability of becoming a candidate pair"),
		SimilarityFile: similarityChart(m.VerifiedHist, m.RejectedHist, m.Params.Threshold),
		ClustersFile:   clusterChart(m.ClusterSizeHist),
		StagesFile:     stageChart(m.Stages),
	}
	p := newPage(m, charts)
	files := map[string][]byte{HTMLFile: p.html()}
	for name, svg := range charts {
		files[name] = svg
	}
	return files, nil
}

// decode parses manifest.json and checks what the report relies on.
func decode(data []byte) (*manifest.Manifest, error) {
	m, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := m.Params.BandParams().Validate(); err != nil {
		return nil, fmt.Errorf("report: manifest params: %w", err)
	}
	if v, r := len(m.VerifiedHist), len(m.RejectedHist); v != r && v != 0 && r != 0 {
		return nil, fmt.Errorf("report: verified_similarity_hist has %d bins, rejected_similarity_hist %d", v, r)
	}
	return m, nil
}

// page is what report.html shows; every string in it is plain text, to be
// escaped, except the charts (SVG drawn by this package, its data escaped).
type page struct {
	Title, Job, Epoch, Started, Finished string
	Cards                                []card
	Warnings                             []string
	Params, Curve                        []row
	CurveNote                            string
	Counts                               []row
	SimilarityNote                       string
	ClusterNote                          string
	Largest                              []clusterRow
	ExactNote                            string
	BoundedClusters                      []boundedClusterRow
	BoundedBuckets                       []boundedBucketRow
	Stages                               []stageRow
	StageNote                            string
	Failures                             []manifest.Failure
	Rejects                              []row // reason, count
	Scripts                              []scriptRow
	RejectNote                           string
	Inputs                               []row
	SkippedInputs                        []row
	InputTotal                           string
	Versions                             []row
	Examples                             []exampleRow
	Rates                                *ratesView
	Paragraphs                           *paragraphsPart

	SCurve, Similarity, Clusters, StageChart string
}

// scriptRow is a row of the scripts table.
type scriptRow struct{ Script, Docs, Share, Thin, Median, Note string }

// card is one headline number.
type card struct{ Label, Value, Note string }

// row is a table row: a name, its value and an explanation.
type row struct{ Name, Value, Note string }

// clusterRow is a row of the largest clusters' table.
type clusterRow struct {
	Cluster, Size, KeptID, KeptURL string
	Members                        []string
	More                           string // how many members are not listed
}

// boundedClusterRow is a row of the bounded clusters' table.
type boundedClusterRow struct {
	Cluster, Size, KeptID, Pairs, Listed, NotListed string
}

// boundedBucketRow is a row of the bounded buckets' table.
type boundedBucketRow struct {
	Band, Key, Docs, Representatives, Hubs, FirstDoc string
}

// exampleRow is a row of the example pairs' table, linked to PairsFile.
type exampleRow struct {
	Link, AID, BID, Similarity, Bands, Why string
}

// paragraphsPart is the paragraph pass's section: a note and the most
// repeated units.
type paragraphsPart struct {
	Note string
	Top  []topUnitRow
}

// topUnitRow is a row of the most repeated units' table.
type topUnitRow struct{ Docs, Occurrences, FirstDoc, Sample string }

// newParagraphs is the section of what the paragraph pass found.
func newParagraphs(m *manifest.Manifest) *paragraphsPart {
	pp := m.Paragraphs
	if pp == nil {
		return nil
	}
	part := &paragraphsPart{Note: fmt.Sprintf("The documents were cut into %s %ss (%s distinct). %s of them are held by two documents or more, "+
		"in %s occurrences of %s: %s of the text. Beyond the first document holding each, they are %s, %s of the text: "+
		"what stripping them would remove. paragraphs/ lists every occurrence.",
		groupDigits(pp.Units), pp.Unit, groupDigits(pp.Distinct), groupDigits(pp.Repeated), groupDigits(pp.Occurrences),
		bytesText(pp.RepeatedBytes), percentOf(pp.RepeatedShare), bytesText(pp.ExtraBytes), percentOf(pp.ExtraShare))}
	if pp.Bounded > 0 {
		part.Note += fmt.Sprintf(" %s held by more than --max-bucket %s documents list the occurrences of their first %s only: %s occurrences are not listed.",
			plural(pp.Bounded, "unit", "units"), groupDigits(int64(m.Params.MaxBucket)), groupDigits(int64(m.Params.MaxBucket)), groupDigits(pp.RowsNotListed))
	}
	part.Note += earlierUnitsNote(pp.Earlier)
	for _, u := range pp.Top {
		first := strconv.FormatInt(u.FirstDoc, 10)
		if u.FirstJob != "" {
			first += " (first held in " + u.FirstJob + ")"
		}
		part.Top = append(part.Top, topUnitRow{Docs: groupDigits(u.Docs), Occurrences: groupDigits(u.Occurrences),
			FirstDoc: first, Sample: u.Sample})
	}
	return part
}

// earlierUnitsNote says whose units the counts include beside the job's
// (--against), and whose they do not: "" for a job matched against none.
func earlierUnitsNote(e *manifest.EarlierUnits) string {
	if e == nil {
		return ""
	}
	note := " The counts include the documents of no earlier job."
	if len(e.Counted) > 0 {
		note = fmt.Sprintf(" The counts include the documents of the earlier jobs %s: a unit is repeated when two documents of this job or of those hold it; %s of this job's distinct units were held by an earlier job.",
			strings.Join(e.Counted, ", "), groupDigits(e.Held))
	}
	for _, nc := range e.NotCounted {
		note += fmt.Sprintf(" The units of earlier job %s are not counted: %s.", nc.Job, nc.Reason)
	}
	return note
}

// percentOf writes a share as a percentage.
func percentOf(share float64) string { return fmt.Sprintf("%.1f%%", 100*share) }

// stageRow is a row of the stage timings' table.
type stageRow struct {
	Name, Tasks, Failed, Seconds, Share, Rate string
}

func newPage(m *manifest.Manifest, charts map[string][]byte) *page {
	p := &page{
		Title:      "neardup run report",
		Job:        m.Job,
		Epoch:      m.Epoch,
		Started:    timeText(m.Started),
		Finished:   timeText(m.Finished),
		Warnings:   m.Warnings,
		Failures:   m.Failures,
		SCurve:     string(charts[SCurveFile]),
		Similarity: string(charts[SimilarityFile]),
		Clusters:   string(charts[ClustersFile]),
		StageChart: string(charts[StagesFile]),
	}
	for i, e := range m.ExamplePairs {
		p.Examples = append(p.Examples, exampleRow{
			Link: PairsFile + "#" + pairAnchor(i), AID: e.AID, BID: e.BID, Similarity: roundedText(e.Similarity),
			Bands: fmt.Sprintf("%d of %d, from band %d", e.BandsCollided, m.Params.Bands, e.FirstBand), Why: e.Why,
		})
	}
	p.Paragraphs = newParagraphs(m)
	c := m.Counts
	docs, inBytes := c.Docs, c.InputBytes
	p.Cards = []card{
		{"documents", groupDigits(docs), bytesText(inBytes) + " of input"},
		{"duplicates to drop", groupDigits(c.Duplicates), percent(c.Duplicates, docs) + " of the documents"},
		{"clusters", groupDigits(c.Clusters), "largest: " + plural(c.LargestCluster, "document", "documents")},
		{"pairs listed", groupDigits(c.Pairs), groupDigits(c.Verified) + " verified of " + groupDigits(c.UniquePairs) + " candidates"},
		{"exact duplicates", groupDigits(c.ExactDups), "in " + plural(c.ExactGroups, "group", "groups") + " of identical shingle sets"},
		{"records rejected", groupDigits(c.Rejected), groupDigits(c.Empty) + " empty documents"},
		{"run time", secondsText(m.Seconds) + " s", rate(inBytes, m.Seconds)},
	}
	if r := m.Rates; r != nil {
		p.Cards = slices.Insert(p.Cards, 2, card{"text removed", bytesText(r.Total.BytesRemoved), percent(r.Total.BytesRemoved, r.Total.Bytes) + " of the documents' text"})
	}
	p.Rates = newRatesView(m.Rates)
	if a := m.Against; len(a) > 0 {
		var earlier int64
		names := make([]string, len(a))
		for i, e := range a {
			earlier += e.Docs
			names[i] = e.Job
		}
		against := c.PairsAgainst
		p.Cards = slices.Insert(p.Cards, 4,
			card{"pairs with earlier jobs", groupDigits(against), "new-vs-old, against " + plural(earlier, "document", "documents") + " of " + strings.Join(names, ", ")},
			card{"pairs among this job's", groupDigits(c.Pairs - against), "new-vs-new"})
	}

	t := m.Params.Threshold
	shingles := plural(int64(m.Params.Words), "token", "tokens") + " per shingle"
	if m.Params.CharGrams > 0 {
		shingles = strconv.Itoa(m.Params.CharGrams) + "-character grams"
	}
	norm := []string{"lower case"}
	switch {
	case m.Params.Tokenizer == "scripts" && m.Params.CharGrams > 0:
		norm = append(norm, "combining marks kept in their tokens")
	case m.Params.Tokenizer == "scripts":
		norm = append(norm, "tokens by script (a word, or a character where a script has no spaces)")
	default:
		norm = append(norm, "tokens are runs of letters and digits (words-only)")
	}
	if m.Params.DigitsToZero {
		norm = append(norm, "digits to 0")
	}
	if m.Params.StripDiacritics {
		norm = append(norm, "diacritics stripped")
	}
	p.Params = []row{
		{"threshold", floatText(t), "Jaccard similarity at which a pair is a near-duplicate"},
		{"K", strconv.Itoa(m.Params.K), "signature values per document"},
		{"b", strconv.Itoa(m.Params.Bands), "bands"},
		{"r", strconv.Itoa(m.Params.Rows), fmt.Sprintf("rows per band (b·r = %d of K values used)", m.Params.Bands*m.Params.Rows)},
		{"shingles", shingles, strings.Join(norm, ", ")},
		{"weights", "fp " + floatText(m.Params.FPWeight) + ", fn " + floatText(m.Params.FNWeight), "weights of false positives and negatives when b and r are chosen"},
		{"sketch", string(m.Params.Sketch), sketchNote(string(m.Params.Sketch))},
		{"verify", string(m.Params.Verify), verifyNote(string(m.Params.Verify))},
		{"keep", string(m.Params.Keep), keepNote(string(m.Params.Keep))},
		{"partitions", strconv.Itoa(m.Params.Partitions), "band partitions (reduce tasks)"},
		{"seed", strconv.FormatUint(m.Params.Seed, 10), "hash seed"},
		{"chunks", strconv.Itoa(m.Chunks), "map tasks"},
	}
	switch string(m.Params.Method) {
	case "":
	case "simhash":
		p.Params = append([]row{
			{"method", "simhash", "SimHash fingerprints, candidates by blocks of bits"},
			{"hamming", strconv.Itoa(m.Params.Hamming), "largest Hamming distance of a pair"},
			{"simhash weights", string(m.Params.SimHashWeights), "token weights"},
		}, p.Params...)
		p.CurveNote = "This job used SimHash: the S-curve is the one of MinHash banding with the same b and r, and does not describe its candidates."
	case "minhash":
		p.Params = append([]row{{"method", "minhash", "MinHash signatures, candidates by LSH banding"}}, p.Params...)
	default:
		p.Params = append([]row{{"method", string(m.Params.Method), ""}}, p.Params...)
	}
	t5 := math.Min(math.Round((t+0.05)*1e9)/1e9, 1)
	curve := cmp.Or(m.Curve, &manifest.CurveSummary{}) // none for SimHash
	p.Curve = []row{
		{"P at threshold " + floatText(t), probLabel(curve.PAtThreshold), "share of pairs exactly at the threshold that become candidates"},
		{"P at " + floatText(t5), probLabel(curve.PAtThreshold05), "the same, 0.05 above the threshold"},
		{"approximate threshold", fmt.Sprintf("%.3f", curve.ApproxThreshold), "(1/b)^(1/r), where the curve rises"},
		{"steepest at", fmt.Sprintf("%.3f", curve.Steepest), "similarity of the steepest slope"},
	}

	// Every count as the manifest lists them, also those of a later
	// version.
	for _, f := range m.CountList() {
		v, note := f.Value.String(), countNote(f.Name)
		if n, err := f.Value.Int64(); err == nil {
			v = groupDigits(n)
			if strings.HasSuffix(f.Name, "_bytes") {
				note = strings.TrimSpace(note + " (" + bytesText(n) + ")")
			}
		}
		p.Counts = append(p.Counts, row{f.Name, v, note})
	}

	p.Rejects, p.RejectNote = rejectRows(m.RejectReasons, c.Rejected)
	for _, s := range m.Scripts {
		r := scriptRow{Script: s.Script, Docs: groupDigits(s.Docs), Share: percent(s.Docs, c.Docs),
			Thin: groupDigits(s.Thin), Median: groupDigits(s.MedianShingles)}
		if !s.Covered && s.Script != "none" {
			r.Note = "no rule of its own: cut at spaces and punctuation"
		}
		p.Scripts = append(p.Scripts, r)
	}

	checked, verified := sum(m.VerifiedHist)+sum(m.RejectedHist), sum(m.VerifiedHist)
	p.SimilarityNote = fmt.Sprintf("%s of %s candidate pairs checked (%s) reached the threshold %s; the other %s were false positives of the banding.",
		groupDigits(verified), groupDigits(checked), percent(verified, checked), floatText(t), groupDigits(checked-verified))
	p.ClusterNote = fmt.Sprintf("%s clusters hold %s documents; each keeps one (--keep %s), so %s are dropped.",
		groupDigits(c.Clusters), groupDigits(c.ClusteredDocs), string(m.Params.Keep), groupDigits(c.Duplicates))
	for _, cl := range m.LargestClusters {
		r := clusterRow{
			Cluster: strconv.FormatInt(cl.Cluster, 10), Size: groupDigits(int64(cl.Size)),
			KeptID: cl.KeptID, KeptURL: cl.KeptURL, Members: cl.Members,
		}
		if more := cl.Size - len(cl.Members); more > 0 && len(cl.Members) > 0 {
			r.More = groupDigits(int64(more))
		}
		p.Largest = append(p.Largest, r)
	}

	p.ExactNote = fmt.Sprintf("%s groups of documents with identical shingle sets hold %s exact duplicates beyond one per group; "+
		"one representative of each group was banded and verified, and pairs/ lists every member's pairs (similarity 1 inside a group). "+
		"Of the %s documents to drop, %s are exact and %s near duplicates.",
		groupDigits(c.ExactGroups), groupDigits(c.ExactDups), groupDigits(c.Duplicates),
		groupDigits(c.ExactDups), groupDigits(c.NearDups))
	if n := c.BoundedClust; n > 0 {
		p.ExactNote += fmt.Sprintf(" %s with more than --max-cluster-pairs %s pairs list only their kept document's pairs: %s pairs are not listed.",
			plural(n, "cluster", "clusters"), groupDigits(m.Params.MaxClusterPairs), groupDigits(c.NotListed))
	} else {
		p.ExactNote += fmt.Sprintf(" No cluster has more than --max-cluster-pairs %s pairs: pairs/ lists every pair found.", groupDigits(m.Params.MaxClusterPairs))
	}
	if n := c.BoundedBuckets; n > 0 {
		p.ExactNote += fmt.Sprintf(" %s held more than --max-bucket %s documents: %s of their pairs were not compared.",
			plural(n, "band bucket", "band buckets"), groupDigits(int64(m.Params.MaxBucket)), groupDigits(c.NotCompared))
	}
	for _, b := range m.BoundedClusters {
		p.BoundedClusters = append(p.BoundedClusters, boundedClusterRow{
			Cluster: strconv.FormatInt(b.Cluster, 10), Size: groupDigits(b.Size), KeptID: b.KeptID,
			Pairs: groupDigits(b.Pairs), Listed: groupDigits(b.Listed), NotListed: groupDigits(b.NotListed),
		})
	}
	for _, b := range m.BoundedBuckets {
		p.BoundedBuckets = append(p.BoundedBuckets, boundedBucketRow{
			Band: strconv.Itoa(int(b.Band)), Key: strconv.FormatInt(b.Key, 10), Docs: groupDigits(b.Docs),
			Representatives: groupDigits(b.Representatives), Hubs: groupDigits(b.Hubs), FirstDoc: strconv.FormatInt(b.FirstDoc, 10),
		})
	}

	var stageTotal float64
	for _, s := range m.Stages {
		stageTotal += s.Seconds
	}
	for _, s := range m.Stages {
		p.Stages = append(p.Stages, stageRow{
			Name: s.Name, Tasks: strconv.Itoa(s.Tasks), Failed: strconv.Itoa(s.Failed),
			Seconds: secondsText(s.Seconds), Share: share(s.Seconds, stageTotal), Rate: rate(inBytes, s.Seconds),
		})
	}
	p.StageNote = fmt.Sprintf("The job took %s s for %s of input: %s overall (input bytes / seconds).",
		secondsText(m.Seconds), bytesText(inBytes), rate(inBytes, m.Seconds))

	var total int64
	for _, in := range m.Inputs {
		total += in.Size
		p.Inputs = append(p.Inputs, row{in.Path, bytesText(in.Size), string(in.Kind)})
	}
	p.InputTotal = fmt.Sprintf("%s, %s (%s bytes)", plural(int64(len(m.Inputs)), "file", "files"), bytesText(total), groupDigits(total))
	for _, s := range m.SkippedInputs {
		p.SkippedInputs = append(p.SkippedInputs, row{Name: s.Path, Note: s.Reason})
	}
	if n := len(m.SkippedInputs); n > 0 {
		p.InputTotal += fmt.Sprintf("; %s skipped", plural(int64(n), "file", "files"))
	}

	names := make([]string, 0, len(m.Versions))
	for k := range m.Versions {
		names = append(names, k)
	}
	// neardup and Go first, then the dependencies by path.
	rank := func(s string) int {
		switch s {
		case "neardup":
			return 0
		case "go":
			return 1
		}
		return 2
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, k := range names {
		p.Versions = append(p.Versions, row{Name: k, Value: m.Versions[k]})
	}
	return p
}

// rejectRows lists the rejects by reason, and says what the list holds
// for a job that rejected n records.
func rejectRows(reasons []manifest.ReasonCount, n int64) ([]row, string) {
	var rows []row
	for _, r := range reasons {
		rows = append(rows, row{Name: r.Reason, Value: groupDigits(r.Count)})
	}
	switch {
	case n == 0:
		return rows, "✓ No record was rejected."
	case len(rows) == 0:
		return rows, fmt.Sprintf("%s rejected: this manifest does not count them by reason; rejects/ lists each with its file, offset and reason.", plural(n, "record was", "records were"))
	}
	return rows, fmt.Sprintf("%s rejected, by the kind of their reason (numbers shown as N); rejects/ lists each with its file, offset and whole reason.", plural(n, "record was", "records were"))
}
