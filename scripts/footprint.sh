#!/usr/bin/env bash
# Bytes per document of a job's output, as issue 21 counts them: runs the
# coordinator (embedded NATS) on INPUT..., sampling the
# work area (OUT/_work) every 0.2 s, then prints, per document of the
# job: the output without the work area, each top-level part of it,
# index/'s parts, the work area's peak, and the files of bands/ and index/
# against the limit of one file per 50 MB of their data.
# Usage: scripts/footprint.sh OUT INPUT...   (extra coordinator flags in FLAGS)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
bin=.cache/footprint/bin
go build -buildvcs=false -o "$bin/" ./cmd/coordinator
rm -rf "$out"
mkdir -p "$out"
peakfile=$(mktemp)
echo 0 >"$peakfile"
(
  peak=0
  while [ ! -e "$out/.footprint-done" ]; do
    if [ -d "$out/_work" ]; then
      # du fails when a file goes while it walks: its total still counts,
      # and the sampler must not stop (set -e, pipefail).
      u=$(du -sb "$out/_work" 2>/dev/null | head -1 | cut -f1 || true)
      if [ -n "$u" ] && [ "$u" -gt "$peak" ]; then peak=$u; echo "$peak" >"$peakfile"; fi
    fi
    sleep 0.2
  done
) &
sampler=$!
# shellcheck disable=SC2086
/usr/bin/time -f "%e s wall, %U s user, %M KiB peak RSS" "$bin/coordinator" --overwrite --quiet \
  --out "$out" ${FLAGS:-} "$@" 2>&1 | grep -E "job complete|peak RSS|level=(WARN|ERROR)" || true
touch "$out/.footprint-done"
wait $sampler || true
python3 - "$out" "$(cat "$peakfile")" <<'PY'
import json, os, sys
out, peak = sys.argv[1], int(sys.argv[2])
docs = json.load(open(os.path.join(out, "manifest.json")))["counts"]["docs"]
def du(p):
    if os.path.isfile(p):
        return os.path.getsize(p), 1
    b = n = 0
    for r, _, fs in os.walk(p):
        for f in fs:
            b += os.path.getsize(os.path.join(r, f)); n += 1
    return b, n
total = 0
rows = []
for name in sorted(os.listdir(out)):
    if name in ("_work", ".footprint-done"):
        continue
    b, n = du(os.path.join(out, name))
    total += b
    rows.append((name, b, n))
print(f"documents: {docs}")
print(f"{'output (without _work)':28} {total/docs:10.1f} B/doc")
for name, b, n in rows:
    print(f"  {name:26} {b/docs:10.1f} B/doc {n:7d} files")
idx = os.path.join(out, "index")
if os.path.isdir(idx):
    for name in sorted(os.listdir(idx)):
        b, n = du(os.path.join(idx, name))
        print(f"    index/{name:19} {b/docs:10.1f} B/doc {n:7d} files")
print(f"{'work area peak (_work)':28} {peak/docs:10.1f} B/doc")
for name in ("bands", "index"):
    b, n = du(os.path.join(out, name))
    allowed = max(1, -(-b // (50 * 10**6)))
    print(f"files in {name}/: {n} for {b/1e6:.1f} MB ({'within' if n <= allowed else 'over'} the limit of {allowed}: one per 50 MB)")
PY
rm -f "$peakfile" "$out/.footprint-done"
