#!/usr/bin/env bash
# The scale run: a coordinator (embedded NATS, no workers of its own) and
# WORKERS worker processes (default 2) of one slot each, every process
# with its peak RSS (/usr/bin/time) and an allocation profile
# (--memprofile). Prints wall time, each process's peak, the stages'
# seconds, the output's bytes per document, the work area's peak (disk
# used, sampled every 5 s) and the largest single allocation of each
# stage in the workers (go tool pprof -tags on the profiles).
# Usage: scripts/scale-run.sh DIR INPUT...   (extra coordinator flags in FLAGS)
# Example: go run ./cmd/gencorpus -n 10000000 -seed 1 -format jsonl -gzip -out /big/c10m
#          scripts/scale-run.sh /big/run10m /big/c10m
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
WORKERS=${WORKERS:-2}
bin=.cache/scale/bin
go build -o "$bin/" ./cmd/coordinator ./cmd/worker
rm -rf "$dir"
mkdir -p "$dir"
port=$((20000 + RANDOM % 20000))
for w in $(seq "$WORKERS"); do
  /usr/bin/time -f "worker $w: %e s wall, %M KiB peak RSS" "$bin/worker" --nats "nats://127.0.0.1:$port" --slots 1 \
    --memprofile "$dir/worker$w.prof" >"$dir/worker$w.log" 2>&1 &
done
used() { df -B1M --output=used "$dir" | tail -1; }
base=$(used)
(
  peak=0
  while [ ! -e "$dir/.done" ]; do
    u=$(used)
    if [ "$u" -gt "$peak" ]; then peak=$u; echo $((peak - base)) >"$dir/work-peak-mib"; fi
    sleep 1
  done
) &
sampler=$!
# shellcheck disable=SC2086
/usr/bin/time -f "coordinator: %e s wall, %M KiB peak RSS" "$bin/coordinator" --overwrite --quiet --workers 0 \
  --listen "127.0.0.1:$port" --memprofile "$dir/coordinator.prof" --out "$dir/out" ${FLAGS:-} "$@" >"$dir/coordinator.log" 2>&1 || true
touch "$dir/.done"
wait $sampler || true
pkill -TERM -f "^$bin/worker --nats nats://127.0.0.1:$port" || true
wait || true
grep -hE "peak RSS|level=ERROR|job complete|worker stopped" "$dir/coordinator.log" "$dir"/worker*.log
echo "work area peak (disk used above the start): $(cat "$dir/work-peak-mib") MiB"
python3 - "$dir/out/manifest.json" <<'EOF'
import json, os, sys
m = json.load(open(sys.argv[1]))
out = os.path.dirname(sys.argv[1])
size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
docs = m["counts"]["docs"]
print("stages:", ", ".join("%s %.0f s" % (s["name"], s["seconds"]) for s in m["stages"]))
print("documents %d, text %.2f GB, %.1f MB/s of text over %.0f s; pairs %d; output %.0f bytes/document"
      % (docs, m["counts"]["text_bytes"] / 1e9, m["counts"]["text_bytes"] / 1e6 / m["seconds"], m["seconds"],
         m["counts"]["pairs"], size / docs))
EOF
for stage in Map Reduce Gather Verify ClusterTask; do
  for p in "$dir"/worker*.prof; do
    go tool pprof -sample_index=alloc_space -tags -focus="stage\.$stage\b" "$bin/worker" "$p" 2>/dev/null |
      awk '/bytes:/{f=1;next} f&&/: /{print $NF}'
  done | python3 -c '
import sys
u = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
def size(s):
    for k in sorted(u, key=len, reverse=True):
        if s.endswith(k):
            return float(s[: -len(k)]) * u[k]
    return 0
v = [size(x.strip()) for x in sys.stdin if x.strip()]
print("largest single allocation in '"$stage"': %.1f MiB" % (max(v) / (1 << 20) if v else 0))
'
done
