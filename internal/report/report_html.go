package report

import "strconv"

// html writes report.html: the page p describes, with its charts inlined.
// It loads nothing: the style is inline and the charts are inlined SVG.
func (p *page) html() []byte {
	var w htmlWriter
	w.head(p.Title + ": " + p.Job)
	w.el("h1", "", p.Title)
	w.raw("\n<p>job ")
	w.el("code", "", p.Job)
	w.raw(" · epoch ")
	w.el("code", "", p.Epoch)
	w.raw(" · started ")
	w.text(p.Started)
	w.raw(" · finished ")
	w.text(p.Finished)
	w.raw("</p>\n</header>\n\n")
	w.cards(p.Cards)
	w.raw("\n")
	p.warnings(&w)
	w.raw("\n\n")
	p.parametersAndCurve(&w)
	w.raw("\n\n")
	p.countsAndCharts(&w)
	w.raw("\n\n")
	if p.Rates != nil {
		p.Rates.html(&w)
		w.raw("\n\n")
	}
	p.largest(&w)
	p.examples(&w)
	w.raw("\n\n")
	p.exactAndBounds(&w)
	p.paragraphs(&w)
	w.raw("\n\n")
	p.stagesAndFailures(&w)
	w.raw("\n")
	p.scripts(&w)
	w.raw("\n\n")
	p.inputsAndVersions(&w)
	w.raw(`

<footer>Written from manifest.json by neardup. The charts are also in report-scurve.svg, report-similarity.svg, report-clusters.svg and report-stages.svg.</footer>
</main>
</body>
</html>
`)
	return w.Bytes()
}

// warnings writes the warnings, or that there are none.
func (p *page) warnings(w *htmlWriter) {
	if len(p.Warnings) == 0 {
		w.raw(`<p class="ok" id="warnings">✓ No warnings.</p>`)
		return
	}
	w.raw(`<section class="warnings" id="warnings">
<h2>⚠ Warnings: check before dropping documents</h2>
<ul>`)
	for _, s := range p.Warnings {
		w.raw("\n")
		w.el("li", "", s)
	}
	w.raw("\n</ul>\n</section>")
}

// parametersAndCurve writes the job's parameters and its S-curve.
func (p *page) parametersAndCurve(w *htmlWriter) {
	w.raw(`<div class="grid">
<div class="panel" id="parameters">
<h2>Parameters</h2>
<table>
<tr><th>parameter</th><th>value</th><th>meaning</th></tr>`)
	for _, r := range p.Params {
		w.tr("", codeCell("key", r.Name), cell("key", r.Value), cell("note", r.Note))
	}
	w.raw(`
</table>
</div>
<div class="panel" id="s-curve">
<h2>S-curve</h2>
`, p.SCurve, "\n<table>")
	for _, r := range p.Curve {
		w.tr("", cell("key", r.Name), cell("num", r.Value), cell("note", r.Note))
	}
	w.raw("\n</table>")
	if p.CurveNote != "" {
		w.raw("\n")
		w.el("p", `class="caption warn"`, p.CurveNote)
	}
	w.raw("\n</div>\n</div>")
}

// countsAndCharts writes the counts and the verification and cluster
// charts.
func (p *page) countsAndCharts(w *htmlWriter) {
	w.raw(`<div class="grid">
<div class="panel" id="counts">
<h2>Counts</h2>
<table>
<tr><th>count</th><th class="num">value</th><th>meaning</th></tr>`)
	for _, r := range p.Counts {
		w.tr("", codeCell("key", r.Name), cell("num", r.Value), cell("note", r.Note))
	}
	w.raw(`
</table>
</div>
<div class="panel" id="charts">
<h2>Verification</h2>
`, p.Similarity)
	w.caption(p.SimilarityNote)
	w.raw("\n", `<h2 style="margin-top:18px">Clusters</h2>`, "\n", p.Clusters)
	w.caption(p.ClusterNote)
	w.raw("\n</div>\n</div>")
}

// html writes the section on where the duplicates are.
func (v *ratesView) html(w *htmlWriter) {
	w.raw(`<section id="rates">
<h2>Where the duplicates are</h2>
`)
	w.el("p", `class="caption" style="margin:0 0 10px"`, v.Note)
	w.raw(`
<div id="rates-hosts">
<h3>By host</h3>
<table>
<tr><th>host</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th><th class="num">of its text</th>`)
	v.repeatedHeader(w)
	rateRows(w, v.Hosts, true, v.Repeated)
	w.raw("\n</table>")
	w.caption(v.HostsNote)
	w.raw(`
</div>
<div id="rates-earlier" style="margin-top:14px">
<h3>By the job of the kept document</h3>
<table>
<tr><th>job</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th></tr>`)
	rateRows(w, v.Earlier, false, false)
	w.raw("\n</table>")
	w.caption(v.EarlierNote)
	w.raw(`
</div>
<div id="rates-files" style="margin-top:14px">
<h3>By input file</h3>
<table>
<tr><th>file</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th><th class="num">of its text</th>`)
	v.repeatedHeader(w)
	rateRows(w, v.Files, true, v.Repeated)
	w.raw("\n</table>")
	if v.FilesNote != "" {
		w.caption(v.FilesNote)
	}
	w.raw("\n</div>\n</section>")
}

// repeatedHeader ends a header row of a rates table: with the column of
// the share of repeated text when the job ran the paragraph pass.
func (v *ratesView) repeatedHeader(w *htmlWriter) {
	if v.Repeated {
		w.raw(`<th class="num">repeated</th>`)
	}
	w.raw(`</tr>`)
}

// rateRows writes rows of a rates table; shares adds the column of the
// share of the text removed, and marks a row of the others as a total;
// repeated adds the column of the share of repeated text.
func rateRows(w *htmlWriter, rows []rateRow, shares, repeated bool) {
	for _, r := range rows {
		cells := []td{cell("mono", r.Name), cell("num", r.Docs), cell("num", r.Duplicates), cell("num", r.Rate), cell("num", r.Removed)}
		if !shares {
			w.tr("", cells...)
			continue
		}
		class := ""
		if r.Other {
			class = "total"
		}
		cells = append(cells, cell("num", r.RemovedShare))
		if repeated {
			cells = append(cells, cell("num", r.RepeatedShare))
		}
		w.tr(class, cells...)
	}
}

// largest writes the largest clusters.
func (p *page) largest(w *htmlWriter) {
	w.raw("<section id=\"largest-clusters\">\n<h2>Largest clusters</h2>\n")
	if len(p.Largest) == 0 {
		w.raw(`<p class="muted">No clusters.</p>`)
		w.raw("\n</section>")
		return
	}
	w.raw(`<table>
<tr><th class="num">cluster</th><th class="num">size</th><th>kept document</th><th>its URL</th><th>members (the first few)</th></tr>`)
	for _, c := range p.Largest {
		w.raw("\n<tr>")
		w.td(cell("num", c.Cluster))
		w.td(cell("num", c.Size))
		w.raw(`<td class="key"><div class="trunc" title="`, escapeText(c.KeptID), `">`)
		w.el("code", "", c.KeptID)
		w.raw(`</div></td><td class="mono muted"><div class="trunc" title="`, escapeText(c.KeptURL), `">`)
		w.text(c.KeptURL)
		w.raw(`</div></td><td class="mono">`)
		for i, id := range c.Members {
			if i > 0 {
				w.raw(", ")
			}
			w.el("span", `class="id"`, id)
		}
		if c.More != "" {
			w.raw(" ")
			w.el("span", `class="muted"`, "… and "+c.More+" more")
		}
		w.raw("</td></tr>")
	}
	w.raw("\n</table>\n</section>")
}

// examples writes the example pairs, linked to PairsFile, if any.
func (p *page) examples(w *htmlWriter) {
	if len(p.Examples) == 0 {
		return
	}
	w.raw(`

<section id="example-pairs">
<h2>Example pairs</h2>
<table>
<tr><th>pair</th><th>documents</th><th class="num">similarity</th><th>bands collided</th><th>chosen as</th></tr>`)
	for _, e := range p.Examples {
		w.raw("\n", `<tr><td class="key"><a href="`, safeURL(e.Link), `">side by side</a></td><td class="mono">`)
		w.el("span", `class="id"`, e.AID)
		w.raw(", ")
		w.el("span", `class="id"`, e.BID)
		w.raw("</td>")
		w.td(cell("num", e.Similarity))
		w.td(cell("key", e.Bands))
		w.td(cell("note", e.Why))
		w.raw("</tr>")
	}
	w.raw("\n</table>")
	w.raw(`
<p class="caption">The links open report-pairs.html: both documents' text, read again from the inputs, with the words of their shared shingles highlighted.</p>
</section>`)
}

// exactAndBounds writes what the exact duplicates and the bounds left out.
func (p *page) exactAndBounds(w *htmlWriter) {
	w.raw("<section id=\"exact-and-bounds\">\n<h2>Exact duplicates and bounds</h2>\n")
	w.el("p", `class="caption"`, p.ExactNote)
	w.raw("\n")
	if len(p.BoundedClusters) > 0 {
		w.raw(`<h3>Clusters whose pairs/ lists only the kept document's pairs</h3>
<table>
<tr><th class="num">cluster</th><th class="num">size</th><th>kept document</th><th class="num">pairs</th><th class="num">listed</th><th class="num">not listed</th></tr>`)
		for _, b := range p.BoundedClusters {
			w.tr("", cell("num", b.Cluster), cell("num", b.Size), codeCell("key", b.KeptID), cell("num", b.Pairs), cell("num", b.Listed), cell("num", b.NotListed))
		}
		w.raw("\n</table>")
	}
	w.raw("\n")
	if len(p.BoundedBuckets) > 0 {
		w.raw(`<h3>Band buckets too large to compare every pair</h3>
<table>
<tr><th class="num">band</th><th class="num">key</th><th class="num">documents</th><th class="num">representatives</th><th class="num">each compared with</th><th class="num">first document</th></tr>`)
		for _, b := range p.BoundedBuckets {
			w.tr("", cell("num", b.Band), cell("num mono", b.Key), cell("num", b.Docs), cell("num", b.Representatives), cell("num", b.Hubs), cell("num mono", b.FirstDoc))
		}
		w.raw("\n</table>")
	}
	w.raw("\n</section>")
}

// paragraphs writes what the paragraph pass found, if it ran.
func (p *page) paragraphs(w *htmlWriter) {
	if p.Paragraphs == nil {
		return
	}
	w.raw("\n\n<section id=\"paragraphs\">\n<h2>Repeated units (--paragraphs)</h2>\n")
	w.el("p", `class="caption"`, p.Paragraphs.Note)
	w.raw(`
<table>
<tr><th class="num">documents</th><th class="num">occurrences</th><th class="num">first document</th><th>text (start)</th></tr>`)
	for _, u := range p.Paragraphs.Top {
		w.tr("", cell("num", u.Docs), cell("num", u.Occurrences), cell("num mono", u.FirstDoc), cell("mono", u.Sample))
	}
	w.raw("\n</table>\n</section>")
}

// stagesAndFailures writes the stages' chart and throughput, the failed
// tasks and the rejected records.
func (p *page) stagesAndFailures(w *htmlWriter) {
	w.raw(`<div class="grid">
<div class="panel" id="stages-panel">
<h2>Stages</h2>
`, p.StageChart)
	w.caption(p.StageNote)
	w.raw(`
</div>
<div class="panel" id="stage-table">
<h2>Throughput</h2>
<table>
<tr><th>stage</th><th class="num">tasks</th><th class="num">failed</th><th class="num">seconds</th><th class="num">share</th><th class="num">input MB/s</th></tr>`)
	for _, s := range p.Stages {
		w.tr("", cell("key", s.Name), cell("num", s.Tasks), cell("num", s.Failed), cell("num", s.Seconds), cell("num", s.Share), cell("num", s.Rate))
	}
	w.raw("\n</table>\n", `<h2 style="margin-top:16px" id="failures">Failed tasks</h2>`, "\n")
	if len(p.Failures) == 0 {
		w.raw(`<p class="ok" style="margin:0">✓ No task failed.</p>`)
	} else {
		w.raw(`<table>
<tr><th>stage</th><th class="num">task</th><th class="num">attempts</th><th>error</th></tr>`)
		for _, f := range p.Failures {
			w.tr("", cell("key", f.Stage), cell("num", strconv.Itoa(f.Index)), cell("num", strconv.Itoa(f.Attempts)), cell("mono", f.Error))
		}
		w.raw("\n</table>")
	}
	w.raw("\n", `<h2 style="margin-top:16px" id="rejects">Rejected records</h2>`, "\n")
	if len(p.Rejects) > 0 {
		w.raw(`<table>
<tr><th>reason</th><th class="num">records</th></tr>`)
		for _, r := range p.Rejects {
			w.tr("", cell("mono", r.Name), cell("num", r.Value))
		}
		w.raw("\n</table>")
	}
	w.caption(p.RejectNote)
	w.raw("\n</div>\n</div>")
}

// scripts writes the documents by script, if the manifest counts them.
func (p *page) scripts(w *htmlWriter) {
	if len(p.Scripts) == 0 {
		return
	}
	w.raw(`<div class="panel" id="scripts">
<h2>Scripts</h2>
<table>
<tr><th>script</th><th class="num">documents</th><th class="num">share</th><th class="num">thin</th><th class="num">median shingles</th><th></th></tr>`)
	for _, s := range p.Scripts {
		w.tr("", cell("", s.Script), cell("num", s.Docs), cell("num", s.Share), cell("num", s.Thin), cell("num", s.Median), cell("", s.Note))
	}
	w.raw(`
</table>
<p class="caption">Documents by the script of most of their letters. A thin document has fewer than 5 shingles: its near copies are found only when nearly identical.</p>
</div>`)
}

// inputsAndVersions writes the inputs, those skipped, and the versions.
func (p *page) inputsAndVersions(w *htmlWriter) {
	w.raw(`<div class="grid">
<div class="panel" id="inputs">
<h2>Inputs</h2>
<table>
<tr><th>path</th><th>kind</th><th class="num">size</th></tr>`)
	for _, in := range p.Inputs {
		w.tr("", cell("mono", in.Name), cell("key", in.Note), cell("num", in.Value))
	}
	for _, s := range p.SkippedInputs {
		w.tr("skipped", cell("mono", s.Name), cell("note", "skipped: "+s.Note), cell("num", "not read"))
	}
	w.raw("\n", `<tr class="total"><td colspan="3">`)
	w.text(p.InputTotal)
	w.raw(`</td></tr>
</table>
</div>
<div class="panel" id="versions">
<h2>Versions</h2>
<table>`)
	for _, v := range p.Versions {
		w.tr("", cell("mono", v.Name), cell("mono", v.Value))
	}
	w.raw("\n</table>\n</div>\n</div>")
}
