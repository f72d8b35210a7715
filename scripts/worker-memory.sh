#!/usr/bin/env bash
# Worker peak memory by input: for each input (a file or directory) runs
# the job as two processes, a coordinator (embedded NATS, no workers of its
# own) and one worker, and prints the input's size and each process's wall
# time and peak RSS. Extra coordinator flags go in FLAGS.
# Usage: FLAGS="--chunk-bytes 33554432" scripts/worker-memory.sh INPUT...
set -euo pipefail
cd "$(dirname "$0")/.."
SLOTS=${SLOTS:-$(nproc)}
dir=.cache/worker-memory
mkdir -p "$dir"
go build -o "$dir/bin/" ./cmd/coordinator ./cmd/worker
timefmt='%e s wall, %M KiB peak RSS'
for input in "$@"; do
  echo "== $input: $(du -sb "$input" | cut -f1) bytes"
  port=$(( 20000 + RANDOM % 20000 ))
  /usr/bin/time -f "worker: $timefmt" "$dir/bin/worker" --nats "nats://127.0.0.1:$port" --slots "$SLOTS" > "$dir/worker.log" 2>&1 &
  wpid=$!
  # shellcheck disable=SC2086
  /usr/bin/time -f "coordinator: $timefmt" "$dir/bin/coordinator" --overwrite --quiet --workers 0 --listen "127.0.0.1:$port" \
    --out "$dir/out" ${FLAGS:-} "$input" 2>&1 | grep -E "job complete|peak RSS|level=(WARN|ERROR)"
  kill -TERM "$(pgrep -P $wpid worker || echo $wpid)" 2>/dev/null || true
  wait $wpid || true
  grep -E "peak RSS" "$dir/worker.log"
done
