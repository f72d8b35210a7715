#!/usr/bin/env bash
# The end-to-end benchmark: generates the benchmark corpus once (N documents,
# default 100,000, seed 1, gzipped JSONL in 10 files) into .cache/bench, then
# 1. runs the job embedded (in-process NATS and workers), and
# 2. runs it again as two processes, a coordinator (embedded NATS, no
#    workers of its own) and one worker, to measure each one's peak memory.
# It prints wall time, input MB/s and peak RSS. Extra arguments go to both
# coordinator runs (e.g. --sketch classic, --method simhash, --workers 1).
# Usage: scripts/bench-job.sh [coordinator flags]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
SEED=${SEED:-1}
SLOTS=${SLOTS:-$(nproc)}
dir=.cache/bench
corpus=$dir/corpus-$N-$SEED
if [ ! -f "$corpus/_complete" ]; then
  echo "== generating $N documents into $corpus"
  rm -rf "$corpus"
  go run ./cmd/gencorpus -n "$N" -seed "$SEED" -format jsonl -gzip -out "$corpus"
  touch "$corpus/_complete"
fi
bytes=$(cat "$corpus"/*.jsonl.gz | wc -c)
echo "== corpus: $N documents, $bytes bytes of gzipped JSONL ($(gzip -dc "$corpus"/*.jsonl.gz | wc -c) bytes uncompressed)"
go build -o "$dir/bin/" ./cmd/coordinator ./cmd/worker
timefmt='%e s wall, %U s user, %S s sys, %M KiB peak RSS'

echo "== 1. embedded: coordinator with in-process NATS and workers"
/usr/bin/time -f "$timefmt" "$dir/bin/coordinator" --overwrite --quiet --out "$dir/out-embedded" "$@" "$corpus" 2>&1 |
  grep -E "job complete|peak RSS|level=(WARN|ERROR)"

echo "== 2. two processes: coordinator (embedded NATS, no workers) + one worker ($SLOTS slots)"
port=$(( 20000 + RANDOM % 20000 ))
/usr/bin/time -f "worker: $timefmt" "$dir/bin/worker" --nats "nats://127.0.0.1:$port" --slots "$SLOTS" > "$dir/worker.log" 2>&1 &
wpid=$!
/usr/bin/time -f "coordinator: $timefmt" "$dir/bin/coordinator" --overwrite --quiet --workers 0 --listen "127.0.0.1:$port" \
  --out "$dir/out-split" "$@" "$corpus" 2>&1 | grep -E "job complete|peak RSS|level=(WARN|ERROR)"
kill -TERM "$(pgrep -P $wpid worker || echo $wpid)" 2>/dev/null || true
wait $wpid || true
grep -E "peak RSS|worker stopped" "$dir/worker.log"
