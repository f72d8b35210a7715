package report

// html writes a series' report.html: the page p describes, with its chart
// inlined.
func (p *seriesPage) html() []byte {
	var w htmlWriter
	w.head("neardup series report: " + p.Dir)
	w.raw("<h1>neardup series report</h1>\n<p>series ")
	w.el("code", "", p.Dir)
	w.raw("</p>\n</header>\n\n")
	w.cards(p.Cards)
	w.raw(`
<div class="grid">
<div class="panel" id="trend">
<h2>Trend</h2>
`, p.Trend)
	w.caption(p.Note)
	w.raw(`
</div>
<div class="panel" id="hosts">
<h2>Duplicate rate by host</h2>
`)
	if len(p.Hosts) > 0 {
		w.raw("<table>\n<tr><th>host</th>")
		for _, name := range p.Names {
			w.el("th", `class="num"`, name)
		}
		w.raw("</tr>")
		for _, h := range p.Hosts {
			w.raw("\n", `<tr><td class="mono"><div class="trunc" title="`, escapeText(h.Name), `">`)
			w.text(h.Name)
			w.raw("</div></td>")
			numCells(&w, h.Cells)
		}
		w.raw("\n</table>")
		w.caption(p.HostsNote)
	} else {
		w.raw(`<p class="muted">The latest member's manifest counts no duplicates by host (a version before rates were counted).</p>`)
	}
	w.raw("\n</div>\n</div>\n\n")
	if len(p.Kept) > 0 {
		w.raw("<section id=\"kept-by-member\">\n<h2>Duplicates by the member of the kept document</h2>\n<table>\n<tr><th>member</th>")
		for _, name := range p.Names {
			w.raw(`<th class="num">for `, escapeText(name), `'s</th>`)
		}
		w.raw("</tr>")
		for _, k := range p.Kept {
			w.raw("\n<tr>")
			w.td(codeCell("key", k.Name))
			numCells(&w, k.Cells)
		}
		w.raw("\n</table>")
		w.caption(p.KeptNote)
		w.raw("\n</section>\n\n")
	}
	w.raw(`<section id="members">
<h2>Members</h2>
<table>
<tr><th>member</th><th>state</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">for its own</th><th class="num">for an earlier member's</th><th class="num">text removed</th><th class="num">of its text</th><th class="num">pairs with earlier members</th></tr>`)
	for _, r := range p.Weeks {
		w.tr("", codeCell("key", r.Name), cell("key", r.State), cell("num", r.Docs), cell("num", r.Duplicates), cell("num", r.Rate),
			cell("num", r.Own), cell("num", r.Earlier), cell("num", r.Removed), cell("num", r.RemovedShare), cell("num", r.PairsAgainst))
	}
	w.raw(`
</table>
<p class="caption">Each member's own report (DIR/MEMBER/report.html) gives its duplicates by host, input file and earlier member.</p>
</section>

<footer>Written from the members' manifest.json files by coordinator series report. The chart is also in report-trend.svg.</footer>
</main>
</body>
</html>
`)
	return w.Bytes()
}

// numCells writes the rest of a trend table's row: a number cell a
// member, and the row's end.
func numCells(w *htmlWriter, cells []string) {
	for _, c := range cells {
		w.td(cell("num", c))
	}
	w.raw("</tr>")
}
