package report

// html writes PairsFile: self-contained, like report.html.
func (pg *pairsPage) html() []byte {
	var w htmlWriter
	w.raw(pairsHead)
	w.text(pg.MaxRunes)
	w.raw(" characters of each document are shown; the shingles are those of the whole text.</p>")
	for _, v := range pg.Pairs {
		w.raw("\n", `<section id="`, escapeText(v.Anchor), `">`, "\n")
		w.el("h2", "", v.Title)
		w.raw("\n", `<p class="muted">Chosen as: `)
		w.text(v.Why)
		w.raw(".</p>\n<table>")
		for _, r := range v.Rows {
			w.tr("", cell("", r.Name), cell("mono", r.Value), cell("note", r.Note))
		}
		w.raw("\n</table>\n", `<div class="side">`)
		for _, d := range v.Docs {
			pg.doc(&w, d)
		}
		w.raw("\n</div>\n</section>")
	}
	if len(pg.Pairs) == 0 {
		w.raw("\n<p>No pairs were found.</p>")
	}
	w.raw("\n</main>\n</body>\n</html>\n")
	return w.Bytes()
}

// doc writes one document of a pair: where it was read, and its text with
// the shared words highlighted, or why it could not be read again.
func (pg *pairsPage) doc(w *htmlWriter, d docView) {
	w.raw("\n", `<div class="doc">`, "\n<h3>")
	w.el("code", "", d.ID)
	w.raw("</h3>")
	for _, s := range []string{d.URL, d.Where} {
		if s != "" {
			w.raw("\n")
			w.el("p", `class="mono muted"`, s)
		}
	}
	if d.Err != "" {
		w.raw("\n", `<p class="err">The text could not be read again: `)
		w.text(d.Err)
		w.raw("</p>")
	} else {
		w.raw("\n", `<p class="muted">`)
		w.text(d.Note)
		if d.Cut {
			w.raw("; text cut after ")
			w.text(pg.MaxRunes)
			w.raw(" characters")
		}
		w.raw(".</p>\n", `<div class="text">`)
		for _, s := range d.Segments {
			if s.Shared {
				w.el("mark", "", s.Text)
			} else {
				w.text(s.Text)
			}
		}
		w.raw("</div>")
	}
	w.raw("\n</div>")
}

// pairsHead is the beginning of PairsFile, up to the number of characters
// of each document shown.
const pairsHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>neardup example pairs</title>
<style>
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1f2328; font: 14px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 20px 24px 32px; }
h1 { margin: 0 0 4px; font-size: 24px; }
h2 { margin: 0 0 8px; font-size: 17px; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
section { background: #fff; border: 1px solid #dcdfe4; border-radius: 6px; padding: 14px 16px; margin-top: 16px; }
table { border-collapse: collapse; }
td { padding: 2px 10px 2px 0; vertical-align: top; }
td.note, .muted { color: #666; }
.side { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; margin-top: 10px; }
@media (max-width: 900px) { .side { grid-template-columns: minmax(0, 1fr); } }
.doc h3 { margin: 0; font-size: 14px; overflow-wrap: anywhere; }
.doc p { margin: 2px 0; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid #eceef1; border-radius: 4px; padding: 8px; margin-top: 6px; max-height: 640px; overflow-y: auto; }
mark { background: #fde68a; color: inherit; }
p.err { color: #9a3412; font-weight: bold; }
</style>
</head>
<body>
<main>
<h1>Example pairs</h1>
<p><a href="report.html">Back to the run report</a></p>
<p class="muted">Each document's text is read again from its input. <mark>Highlighted</mark> words belong to at least one shingle that both documents have (with the job's shingle options). Only the first `
