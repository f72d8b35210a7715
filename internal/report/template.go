package report

// pageTemplate is the html/template of report.html. It loads nothing: the
// style is inline and the charts are inlined SVG.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}: {{.Job}}</title>
` + pageStyle + `</head>
<body>
<main>
<header>
<h1>{{.Title}}</h1>
<p>job <code>{{.Job}}</code> · epoch <code>{{.Epoch}}</code> · started {{.Started}} · finished {{.Finished}}</p>
</header>

` + cardsTemplate + `
{{if .Warnings -}}
<section class="warnings" id="warnings">
<h2>⚠ Warnings: check before dropping documents</h2>
<ul>
{{- range .Warnings}}
<li>{{.}}</li>
{{- end}}
</ul>
</section>
{{- else -}}
<p class="ok" id="warnings">✓ No warnings.</p>
{{- end}}

<div class="grid">
<div class="panel" id="parameters">
<h2>Parameters</h2>
<table>
<tr><th>parameter</th><th>value</th><th>meaning</th></tr>
{{- range .Params}}
<tr><td class="key"><code>{{.Name}}</code></td><td class="key">{{.Value}}</td><td class="note">{{.Note}}</td></tr>
{{- end}}
</table>
</div>
<div class="panel" id="s-curve">
<h2>S-curve</h2>
{{.SCurve}}
<table>
{{- range .Curve}}
<tr><td class="key">{{.Name}}</td><td class="num">{{.Value}}</td><td class="note">{{.Note}}</td></tr>
{{- end}}
</table>
{{- with .CurveNote}}
<p class="caption warn">{{.}}</p>
{{- end}}
</div>
</div>

<div class="grid">
<div class="panel" id="counts">
<h2>Counts</h2>
<table>
<tr><th>count</th><th class="num">value</th><th>meaning</th></tr>
{{- range .Counts}}
<tr><td class="key"><code>{{.Name}}</code></td><td class="num">{{.Value}}</td><td class="note">{{.Note}}</td></tr>
{{- end}}
</table>
</div>
<div class="panel" id="charts">
<h2>Verification</h2>
{{.Similarity}}
<p class="caption">{{.SimilarityNote}}</p>
<h2 style="margin-top:18px">Clusters</h2>
{{.Clusters}}
<p class="caption">{{.ClusterNote}}</p>
</div>
</div>

{{with .Rates -}}
<section id="rates">
<h2>Where the duplicates are</h2>
<p class="caption" style="margin:0 0 10px">{{.Note}}</p>
<div id="rates-hosts">
<h3>By host</h3>
<table>
<tr><th>host</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th><th class="num">of its text</th></tr>
{{- range .Hosts}}
<tr{{if .Other}} class="total"{{end}}><td class="mono">{{.Name}}</td><td class="num">{{.Docs}}</td><td class="num">{{.Duplicates}}</td><td class="num">{{.Rate}}</td><td class="num">{{.Removed}}</td><td class="num">{{.RemovedShare}}</td></tr>
{{- end}}
</table>
<p class="caption">{{.HostsNote}}</p>
</div>
<div id="rates-earlier" style="margin-top:14px">
<h3>By the job of the kept document</h3>
<table>
<tr><th>job</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th></tr>
{{- range .Earlier}}
<tr><td class="mono">{{.Name}}</td><td class="num">{{.Docs}}</td><td class="num">{{.Duplicates}}</td><td class="num">{{.Rate}}</td><td class="num">{{.Removed}}</td></tr>
{{- end}}
</table>
<p class="caption">{{.EarlierNote}}</p>
</div>
<div id="rates-files" style="margin-top:14px">
<h3>By input file</h3>
<table>
<tr><th>file</th><th class="num">documents</th><th class="num">duplicates</th><th class="num">rate</th><th class="num">text removed</th><th class="num">of its text</th></tr>
{{- range .Files}}
<tr{{if .Other}} class="total"{{end}}><td class="mono">{{.Name}}</td><td class="num">{{.Docs}}</td><td class="num">{{.Duplicates}}</td><td class="num">{{.Rate}}</td><td class="num">{{.Removed}}</td><td class="num">{{.RemovedShare}}</td></tr>
{{- end}}
</table>
{{- with .FilesNote}}
<p class="caption">{{.}}</p>
{{- end}}
</div>
</section>

{{end -}}
<section id="largest-clusters">
<h2>Largest clusters</h2>
{{if .Largest -}}
<table>
<tr><th class="num">cluster</th><th class="num">size</th><th>kept document</th><th>its URL</th><th>members (the first few)</th></tr>
{{- range .Largest}}
<tr><td class="num">{{.Cluster}}</td><td class="num">{{.Size}}</td><td class="key"><div class="trunc" title="{{.KeptID}}"><code>{{.KeptID}}</code></div></td><td class="mono muted"><div class="trunc" title="{{.KeptURL}}">{{.KeptURL}}</div></td><td class="mono">{{range $i, $id := .Members}}{{if $i}}, {{end}}<span class="id">{{$id}}</span>{{end}}{{if .More}} <span class="muted">… and {{.More}} more</span>{{end}}</td></tr>
{{- end}}
</table>
{{- else -}}
<p class="muted">No clusters.</p>
{{- end}}
</section>
{{- if .Examples}}

<section id="example-pairs">
<h2>Example pairs</h2>
<table>
<tr><th>pair</th><th>documents</th><th class="num">similarity</th><th>bands collided</th><th>chosen as</th></tr>
{{- range $i, $e := .Examples}}
<tr><td class="key"><a href="{{$e.Link}}">side by side</a></td><td class="mono"><span class="id">{{$e.AID}}</span>, <span class="id">{{$e.BID}}</span></td><td class="num">{{$e.Similarity}}</td><td class="key">{{$e.Bands}}</td><td class="note">{{$e.Why}}</td></tr>
{{- end}}
</table>
<p class="caption">The links open report-pairs.html: both documents' text, read again from the inputs, with the words of their shared shingles highlighted.</p>
</section>
{{- end}}

<section id="exact-and-bounds">
<h2>Exact duplicates and bounds</h2>
<p class="caption">{{.ExactNote}}</p>
{{if .BoundedClusters -}}
<h3>Clusters whose pairs/ lists only the kept document's pairs</h3>
<table>
<tr><th class="num">cluster</th><th class="num">size</th><th>kept document</th><th class="num">pairs</th><th class="num">listed</th><th class="num">not listed</th></tr>
{{- range .BoundedClusters}}
<tr><td class="num">{{.Cluster}}</td><td class="num">{{.Size}}</td><td class="key"><code>{{.KeptID}}</code></td><td class="num">{{.Pairs}}</td><td class="num">{{.Listed}}</td><td class="num">{{.NotListed}}</td></tr>
{{- end}}
</table>
{{- end}}
{{if .BoundedBuckets -}}
<h3>Band buckets too large to compare every pair</h3>
<table>
<tr><th class="num">band</th><th class="num">key</th><th class="num">documents</th><th class="num">representatives</th><th class="num">each compared with</th><th class="num">first document</th></tr>
{{- range .BoundedBuckets}}
<tr><td class="num">{{.Band}}</td><td class="num mono">{{.Key}}</td><td class="num">{{.Docs}}</td><td class="num">{{.Representatives}}</td><td class="num">{{.Hubs}}</td><td class="num mono">{{.FirstDoc}}</td></tr>
{{- end}}
</table>
{{- end}}
</section>
{{- if .Paragraphs}}

<section id="paragraphs">
<h2>Repeated units (--paragraphs)</h2>
<p class="caption">{{.Paragraphs.Note}}</p>
<table>
<tr><th class="num">documents</th><th class="num">occurrences</th><th class="num">first document</th><th>text (start)</th></tr>
{{- range .Paragraphs.Top}}
<tr><td class="num">{{.Docs}}</td><td class="num">{{.Occurrences}}</td><td class="num mono">{{.FirstDoc}}</td><td class="mono">{{.Sample}}</td></tr>
{{- end}}
</table>
</section>
{{- end}}

<div class="grid">
<div class="panel" id="stages-panel">
<h2>Stages</h2>
{{.StageChart}}
<p class="caption">{{.StageNote}}</p>
</div>
<div class="panel" id="stage-table">
<h2>Throughput</h2>
<table>
<tr><th>stage</th><th class="num">tasks</th><th class="num">failed</th><th class="num">seconds</th><th class="num">share</th><th class="num">input MB/s</th></tr>
{{- range .Stages}}
<tr><td class="key">{{.Name}}</td><td class="num">{{.Tasks}}</td><td class="num">{{.Failed}}</td><td class="num">{{.Seconds}}</td><td class="num">{{.Share}}</td><td class="num">{{.Rate}}</td></tr>
{{- end}}
</table>
<h2 style="margin-top:16px" id="failures">Failed tasks</h2>
{{if .Failures -}}
<table>
<tr><th>stage</th><th class="num">task</th><th class="num">attempts</th><th>error</th></tr>
{{- range .Failures}}
<tr><td class="key">{{.Stage}}</td><td class="num">{{.Index}}</td><td class="num">{{.Attempts}}</td><td class="mono">{{.Error}}</td></tr>
{{- end}}
</table>
{{- else -}}
<p class="ok" style="margin:0">✓ No task failed.</p>
{{- end}}
<h2 style="margin-top:16px" id="rejects">Rejected records</h2>
{{if .Rejects -}}
<table>
<tr><th>reason</th><th class="num">records</th></tr>
{{- range .Rejects}}
<tr><td class="mono">{{.Name}}</td><td class="num">{{.Value}}</td></tr>
{{- end}}
</table>
{{- end}}
<p class="caption">{{.RejectNote}}</p>
</div>
</div>
{{if .Scripts -}}
<div class="panel" id="scripts">
<h2>Scripts</h2>
<table>
<tr><th>script</th><th class="num">documents</th><th class="num">share</th><th class="num">thin</th><th class="num">median shingles</th><th></th></tr>
{{- range .Scripts}}
<tr><td>{{.Script}}</td><td class="num">{{.Docs}}</td><td class="num">{{.Share}}</td><td class="num">{{.Thin}}</td><td class="num">{{.Median}}</td><td>{{.Note}}</td></tr>
{{- end}}
</table>
<p class="caption">Documents by the script of most of their letters. A thin document has fewer than 5 shingles: its near copies are found only when nearly identical.</p>
</div>
{{- end}}

<div class="grid">
<div class="panel" id="inputs">
<h2>Inputs</h2>
<table>
<tr><th>path</th><th>kind</th><th class="num">size</th></tr>
{{- range .Inputs}}
<tr><td class="mono">{{.Name}}</td><td class="key">{{.Note}}</td><td class="num">{{.Value}}</td></tr>
{{- end}}
{{- range .SkippedInputs}}
<tr class="skipped"><td class="mono">{{.Name}}</td><td class="note">skipped: {{.Note}}</td><td class="num">not read</td></tr>
{{- end}}
<tr class="total"><td colspan="3">{{.InputTotal}}</td></tr>
</table>
</div>
<div class="panel" id="versions">
<h2>Versions</h2>
<table>
{{- range .Versions}}
<tr><td class="mono">{{.Name}}</td><td class="mono">{{.Value}}</td></tr>
{{- end}}
</table>
</div>
</div>

<footer>Written from manifest.json by neardup. The charts are also in report-scurve.svg, report-similarity.svg, report-clusters.svg and report-stages.svg.</footer>
</main>
</body>
</html>
`

// pageStyle is the inline style of the report's pages.
const pageStyle = `<style>
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1f2328; font: 14px/1.45 "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 20px 24px 32px; }
header h1 { margin: 0 0 4px; font-size: 24px; }
header p { margin: 0; color: #555; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
h2 { margin: 0 0 10px; font-size: 17px; }
section, .panel { background: #fff; border: 1px solid #dcdfe4; border-radius: 6px; padding: 14px 16px; margin-top: 16px; }
.grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; margin-top: 16px; }
.grid > .panel { margin-top: 0; }
@media (max-width: 900px) { .grid { grid-template-columns: minmax(0, 1fr); } }
.cards { display: grid; grid-template-columns: repeat(6, minmax(0, 1fr)); gap: 12px; margin-top: 16px; }
@media (max-width: 900px) { .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
.card { background: #fff; border: 1px solid #dcdfe4; border-radius: 6px; padding: 10px 12px; }
.card .label { color: #555; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 22px; font-weight: bold; margin: 2px 0; }
.card .note { color: #666; font-size: 12px; }
.warnings { background: #fff4e5; border: 2px solid #d97706; }
.warnings h2 { color: #9a3412; }
.warnings li { margin: 4px 0; font-weight: bold; color: #7c2d12; }
.ok { color: #166534; margin: 12px 0 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eceef1; overflow-wrap: anywhere; }
th { background: #f6f7f9; font-size: 12px; color: #444; }
td.key, span.id { white-space: nowrap; overflow-wrap: normal; }
div.trunc { min-width: 8em; max-width: 22em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; overflow-wrap: normal; }
td.note { color: #666; font-size: 12.5px; }
tr.total td { font-weight: bold; border-top: 2px solid #dcdfe4; }
svg.chart { display: block; width: 100%; height: auto; max-width: 640px; margin: 0 auto; }
p.caption { margin: 8px 0 0; color: #444; }
.muted { color: #666; }
p.warn { color: #9a3412; font-weight: bold; }
footer { margin-top: 20px; color: #666; font-size: 12px; }
</style>
`

// cardsTemplate shows a page's headline numbers (its Cards).
const cardsTemplate = `<div class="cards">
{{- range .Cards}}
<div class="card"><div class="label">{{.Label}}</div><div class="value">{{.Value}}</div><div class="note">{{.Note}}</div></div>
{{- end}}
</div>
`
