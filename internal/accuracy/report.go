package accuracy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
)

// WriteMarkdown writes the report as Markdown: the command, the corpus and
// its ground truth, then one table per run.
func WriteMarkdown(w io.Writer, r *Report) error {
	return writeDocument(w, "neardup accuracy", r.Command, r.Runs, r.Pass, func(b *bytes.Buffer) {
		writeCorpus(b, &r.Corpus)
		for i := range r.Runs {
			writeRun(b, &r.Runs[i])
		}
	})
}

// writeDocument writes a report to w: the title, the command, what body
// writes, then the verdict on the runs.
func writeDocument(w io.Writer, title string, command []string, runs []Run, pass bool, body func(*bytes.Buffer)) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", title)
	if len(command) > 0 {
		fmt.Fprintf(&b, "`%s`\n\n", strings.Join(command, " "))
	}
	body(&b)
	writeVerdict(&b, runs, pass)
	_, err := w.Write(b.Bytes())
	return err
}

// writeVerdict writes the closing line: how many runs were checked and
// whether they pass.
func writeVerdict(b *bytes.Buffer, runs []Run, pass bool) {
	checked := 0
	for _, run := range runs {
		if run.Checked {
			checked++
		}
	}
	switch {
	case checked == 0:
		fmt.Fprintf(b, "**Check: no run checked (only MinHash runs with exact verification are)**\n")
	case pass:
		fmt.Fprintf(b, "**Check (%d MinHash runs): PASS**\n", checked)
	default:
		fmt.Fprintf(b, "**Check (%d MinHash runs): FAIL**\n", checked)
	}
}

// writeCorpus writes the corpus section.
func writeCorpus(b *bytes.Buffer, c *CorpusSummary) {
	cfg := c.Config
	fmt.Fprintf(b, "## Corpus\n\n")
	fmt.Fprintf(b, "%d documents (seed %d) in %d JSONL file(s), generated in %.1f s; ground truth (exact join, J >= %.2f) in %.1f s.\n",
		c.Docs, cfg.Seed, c.Files, c.GenerateSeconds, c.MinJ, c.TruthSeconds)
	fmt.Fprintf(b, "Kinds: %s. %d documents (%.1f%%) have under %d tokens.\n\n",
		kinds(c.Kinds), c.ShortDocs, 100*ratio(c.ShortDocs, max(c.Docs, 1)), ShortWords)

	fmt.Fprintf(b, "| tokens |")
	for _, l := range c.Lengths {
		fmt.Fprintf(b, " %s |", lengthLabel(l))
	}
	fmt.Fprintf(b, "\n|---|%s\n| documents |", strings.Repeat("---|", len(c.Lengths)))
	for _, l := range c.Lengths {
		fmt.Fprintf(b, " %d |", l.Docs)
	}
	fmt.Fprintf(b, "\n\nTrue pairs by similarity (short: both documents under %d tokens; long: the others; template: both in the template family; rest: the others):\n\n", ShortWords)
	fmt.Fprintf(b, "| true J | all | short | long | template | rest |\n|---|---:|---:|---:|---:|---:|\n")
	var total Split
	for _, bin := range c.TruePairs {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d |\n", bin.Label, bin.All.True, bin.Short.True, bin.Long.True, bin.Template.True, bin.Rest.True)
		total.All.True += bin.All.True
		total.Short.True += bin.Short.True
		total.Long.True += bin.Long.True
		total.Template.True += bin.Template.True
		total.Rest.True += bin.Rest.True
	}
	fmt.Fprintf(b, "| J >= %.2f | %d | %d | %d | %d | %d |\n\n", c.MinJ, total.All.True, total.Short.True, total.Long.True, total.Template.True, total.Rest.True)
	if t := c.Template; t.Pairs > 0 {
		fmt.Fprintf(b, "Template family: %d pages (%d-word template, unique parts of %d to %d words), %d pairs: J from %.3f to %.3f (p10 %.3f, median %.3f, p90 %.3f), %d below 0.5.\n\n",
			t.Docs, cfg.TemplateWords, cfg.TemplateUniqueMinWords, cfg.TemplateUniqueMaxWords,
			t.Pairs, t.Min, t.Max, t.P10, t.Median, t.P90, t.Below)
	}
}

// kinds lists document kinds in a fixed order.
func kinds(m map[corpus.Kind]int) string {
	var parts []string
	for _, k := range []corpus.Kind{corpus.KindUnique, corpus.KindBase, corpus.KindNear, corpus.KindExact,
		corpus.KindShort, corpus.KindTemplate, corpus.KindEmpty} {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

func lengthLabel(l LengthBin) string {
	switch {
	case l.Hi == 0:
		return fmt.Sprintf("%d+", l.Lo)
	case l.Hi == l.Lo+1:
		return fmt.Sprint(l.Lo)
	}
	return fmt.Sprintf("%d-%d", l.Lo, l.Hi-1)
}

// writeRun writes one run's section.
func writeRun(b *bytes.Buffer, run *Run) {
	r := run.Result
	writeRunHeader(b, run)
	fmt.Fprintf(b, "Recall of the true pairs with J >= %.2f (pair: listed in pairs/; cluster: both documents in one cluster), by length:\n\n", r.Threshold)
	writeTable(b, r, []string{"all", "short", "long"}, func(s Split) []Recall { return []Recall{s.All, s.Short, s.Long} })
	fmt.Fprintf(b, "By family:\n\n")
	writeTable(b, r, []string{"template", "rest"}, func(s Split) []Recall { return []Recall{s.Template, s.Rest} })
	writeFailures(b, run)
}

// writeRunHeader writes the heading of a run's section, the job's
// parameters and counts, and what its pairs/ holds.
func writeRunHeader(b *bytes.Buffer, run *Run) {
	p, r := run.Params, run.Result
	fmt.Fprintf(b, "## %s, threshold %.2f\n\n", run.Method, r.Threshold)
	if run.Method == job.MethodSimHash {
		fmt.Fprintf(b, "Hamming <= %d (%d blocks), weights %s, verify %s.", p.Hamming, p.Bands, p.SimHashWeights, p.Verify)
	} else {
		fmt.Fprintf(b, "Sketch %s, K = %d, b = %d, r = %d, verify %s.", p.Sketch, p.K, p.Bands, p.Rows, p.Verify)
	}
	fmt.Fprintf(b, " Job wall time %.2f s; %d candidate pairs checked, %d verified pairs, %d clusters (%d documents).\n\n",
		run.Seconds, run.Counts.UniquePairs, run.Counts.Verified, run.Counts.Clusters, r.ClusterDocs)
	fmt.Fprintf(b, "pairs/: %d rows, %d distinct pairs, %d repeated, %d with a >= b, %d with unknown ids; %d below the threshold, %d similarity mismatches (largest error %.3g): precision %.4f.\n\n",
		r.Rows, r.Distinct, r.Repeated, r.Unordered, r.Unknown, r.Below, r.Mismatches, r.MaxError, r.Precision)
}

// writeFailures writes whether the run passes its check.
func writeFailures(b *bytes.Buffer, run *Run) {
	switch {
	case len(run.Failures) == 0:
		fmt.Fprintf(b, "Check: pass.\n\n")
	case run.Checked:
		fmt.Fprintf(b, "Check: FAIL: %s.\n\n", strings.Join(run.Failures, "; "))
	default:
		fmt.Fprintf(b, "Check (not applied to %s): would fail: %s.\n\n", run.Method, strings.Join(run.Failures, "; "))
	}
}

// writeTable writes a recall table of r with a group of three columns
// (true pairs, pair recall, cluster recall) for each of the recalls that
// cols picks from a Split.
func writeTable(b *bytes.Buffer, r *Result, names []string, cols func(Split) []Recall) {
	b.WriteString("| true J |")
	for _, n := range names {
		fmt.Fprintf(b, " %s pairs | pair | cluster |", n)
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---:|", 3*len(names)))
	rows := append(slices.Clone(r.Bins), r.Above, r.Near, r.Total)
	for k, bin := range rows {
		label := bin.Label
		if k >= len(r.Bins) {
			label = "**" + label + "**"
		}
		fmt.Fprintf(b, "| %s |", label)
		for _, rc := range cols(bin.Split) {
			if rc.True == 0 {
				fmt.Fprintf(b, " 0 | - | - |")
				continue
			}
			fmt.Fprintf(b, " %d | %.4f | %.4f |", rc.True, rc.PairRecall(), rc.ClusterRecall())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// WriteJSON writes a report (a *Report or a *MultilingualReport) as
// indented JSON to path.
func WriteJSON(path string, r any) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteMultilingualMarkdown writes a multilingual report as Markdown: the
// command, the corpus by language, for each run a table with a row per
// language and a column per similarity bin, then the planted pairs.
func WriteMultilingualMarkdown(w io.Writer, r *MultilingualReport) error {
	return writeDocument(w, "neardup accuracy, multilingual", r.Command, r.Runs, r.Pass, func(b *bytes.Buffer) {
		writeLanguages(b, &r.Corpus)
		for i := range r.Runs {
			writeLanguageRun(b, &r.Runs[i])
		}
		writePlanted(b, r)
	})
}

// writeLanguages writes the corpus section of a multilingual report.
func writeLanguages(b *bytes.Buffer, c *MultilingualSummary) {
	fmt.Fprintf(b, "## Corpus\n\n")
	fmt.Fprintf(b, "%d documents, %d in each of %d languages (seed %d), in %d JSONL file(s), generated in %.1f s; ground truth (exact join, J >= %.2f, tokens and shingles of the job's tokenizer) in %.1f s; %d true pairs join two languages.\n\n",
		c.Docs, c.Config.PerLanguage, len(c.Languages), c.Config.Seed, c.Files, c.GenerateSeconds, c.MinJ, c.TruthSeconds, c.CrossPairs)
	fmt.Fprintf(b, "| language | script | documents | unique | short | base | near | exact | median tokens | under %d tokens | true pairs (J >= %.2f) |\n", ShortWords, c.MinJ)
	fmt.Fprintf(b, "|---|---|%s\n", strings.Repeat("---:|", 9))
	for _, l := range c.Languages {
		pairs := 0
		for _, bin := range l.TruePairs {
			pairs += bin.All.True
		}
		k := l.Kinds
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", l.Code, l.Script, l.Docs,
			k[corpus.KindUnique], k[corpus.KindShort], k[corpus.KindBase], k[corpus.KindNear], k[corpus.KindExact],
			l.MedianTokens, l.ShortDocs, pairs)
	}
	b.WriteString("\n")
}

// writeLanguageRun writes one run's section of a multilingual report.
func writeLanguageRun(b *bytes.Buffer, run *Run) {
	r := run.Result
	writeRunHeader(b, run)
	fmt.Fprintf(b, "By language: pairs listed / true pairs (pair recall) by true similarity, and the precision of the rows that name two documents of the language.\n\n")
	b.WriteString("| language |")
	for _, bin := range r.Bins {
		fmt.Fprintf(b, " %s |", bin.Label)
	}
	fmt.Fprintf(b, " **%s** | precision | planted |\n|---|%s\n", r.Above.Label, strings.Repeat("---:|", len(r.Bins)+3))
	row := func(name string, r *Result, planted string) {
		fmt.Fprintf(b, "| %s |", name)
		for _, bin := range r.Bins {
			fmt.Fprintf(b, " %s |", recallCell(bin.All))
		}
		fmt.Fprintf(b, " **%s** | %.4f | %s |\n", recallCell(r.Above.All), r.Precision, planted)
	}
	listed, planted := 0, 0
	for _, l := range run.Languages {
		row(l.Language, l.Result, fmt.Sprintf("%d/%d", l.PlantedListed, l.Planted))
		listed, planted = listed+l.PlantedListed, planted+l.Planted
	}
	row("**all**", r, fmt.Sprintf("%d/%d", listed, planted))
	b.WriteString("\n")
	writeFailures(b, run)
}

// recallCell formats a recall as "listed/true (recall)".
func recallCell(rc Recall) string {
	if rc.True == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%.4f)", rc.Listed, rc.True, rc.PairRecall())
}

// writePlanted writes the planted pairs of every language and how many
// each run lists.
func writePlanted(b *bytes.Buffer, r *MultilingualReport) {
	fmt.Fprintf(b, "## Planted near copies\n\n")
	fmt.Fprintf(b, "Base-to-copy pairs of planted families, whose copies have about %.0f%% of their words or graphemes edited; J is their exact similarity under the job's tokenizer. A run at threshold %.2f must list at least %.0f%% of them in every language.\n\n",
		100*corpus.PlantedEditRate, PlantedThreshold, 100*MinPlantedRecall)
	b.WriteString("| language | edited | pairs | mean edit rate | J min | J median | J max |")
	for _, run := range r.Runs {
		fmt.Fprintf(b, " listed (%s %.2f) |", run.Method, run.Result.Threshold)
	}
	fmt.Fprintf(b, "\n|---|---|%s\n", strings.Repeat("---:|", 5+len(r.Runs)))
	for k, l := range r.Corpus.Languages {
		p := l.Planted
		fmt.Fprintf(b, "| %s | %s | %d | %.4f | %.3f | %.3f | %.3f |", l.Code, l.EditUnit, p.Pairs, p.EditRate, p.MinJ, p.MedianJ, p.MaxJ)
		for _, run := range r.Runs {
			lr := run.Languages[k]
			fmt.Fprintf(b, " %d/%d (%.4f) |", lr.PlantedListed, lr.Planted, lr.PlantedRecall())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
