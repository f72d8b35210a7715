package report

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
