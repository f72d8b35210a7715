#!/usr/bin/env bash
# One run of the cost model (docs/performance.md, "The cost model,
# checked at 10M"): the coordinator (embedded NATS, its in-process
# workers) on INPUT..., its CPU time (/proc/PID/stat), its bytes read and
# written through system calls (/proc/PID/io) and the work area's disk
# use sampled every INTERVAL seconds (default 0.5), the stages' ends read
# from its JSON log. Writes DIR/cost.json: per stage the wall and CPU
# seconds and the bytes read and written, and for the job its wall, CPU,
# peak RSS, work-area peak and output bytes; scripts/cost-model.py fits
# and predicts from such files.
# Usage: scripts/cost-run.sh DIR INPUT...   (extra coordinator flags in FLAGS)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
bin=.cache/cost/bin
go build -buildvcs=false -o "$bin/" ./cmd/coordinator
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck disable=SC2086
/usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$bin/coordinator" --overwrite \
  --log-format json --out "$dir/out" ${FLAGS:-} "$@" >"$dir/stdout" 2>"$dir/log" &
timer=$!
pid=
while [ -z "$pid" ] && kill -0 "$timer" 2>/dev/null; do
  pid=$(pgrep -P "$timer" || true)
  sleep 0.05
done
ticks=$(getconf CLK_TCK)
: >"$dir/samples"
while [ -n "$pid" ] && [ -r "/proc/$pid/stat" ]; do
  # time, CPU seconds (utime+stime), bytes read and written through
  # system calls (rchar, wchar), the work area's bytes
  stat=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null || true)
  io=$(awk '/^rchar|^wchar/{printf "%s ", $2}' "/proc/$pid/io" 2>/dev/null || true)
  work=$(du -sb "$dir/out/_work" 2>/dev/null | cut -f1 || true)
  if [ -n "$stat" ] && [ -n "$io" ]; then
    set -- $stat
    echo "$(date +%s.%N) $(((${1} + ${2}))) $ticks $io${work:-0}" >>"$dir/samples"
  fi
  sleep "${INTERVAL:-0.5}"
done
wait "$timer"
python3 - "$dir" <<'PY'
import datetime, json, os, sys
d = sys.argv[1]
def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
ends, start = [], None
for line in open(os.path.join(d, "log")):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("msg") == "job planned":
        start = ts(e["time"])
    if e.get("msg") == "stage done":
        ends.append((e["stage"], ts(e["time"])))
samples = []
for line in open(os.path.join(d, "samples")):
    t, cpu, hz, rb, wb, work = line.split()
    samples.append((float(t), int(cpu) / int(hz), int(rb), int(wb), int(work)))
def at(t, i):
    # the sampled value i at time t, interpolated between samples
    prev = samples[0]
    for s in samples:
        if s[0] >= t:
            if s[0] == prev[0]:
                return s[i]
            f = (t - prev[0]) / (s[0] - prev[0])
            return prev[i] + f * (s[i] - prev[i])
        prev = s
    return samples[-1][i]
wall, user, sys_, rss = open(os.path.join(d, "time")).read().split()
m = json.load(open(os.path.join(d, "out", "manifest.json")))
out = os.path.join(d, "out")
size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
# plan: from the first sample to the job planned; finish: from the last
# stage's end to the last sample (the report, the manifest)
stages, t0 = [], samples[0][0]
for name, t1 in [("plan", start)] + ends + [("finish", samples[-1][0])]:
    stages.append({"stage": name, "wall": t1 - t0, "cpu": at(t1, 1) - at(t0, 1),
                   "read": at(t1, 2) - at(t0, 2), "written": at(t1, 3) - at(t0, 3)})
    t0 = t1
res = {"docs": m["counts"]["docs"], "text_bytes": m["counts"]["text_bytes"],
       "pairs": m["counts"]["pairs"], "wall": float(wall), "cpu": float(user) + float(sys_),
       "peak_rss_mib": int(rss) / 1024, "work_peak": max(s[4] for s in samples),
       "output_bytes": size, "stages": stages}
json.dump(res, open(os.path.join(d, "cost.json"), "w"), indent=1)
print(json.dumps(res, indent=1))
PY
