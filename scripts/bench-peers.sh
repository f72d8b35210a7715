#!/usr/bin/env bash
# Paired benchmark of neardup against a peer library on one corpus at one
# threshold: ROUNDS rounds, each running the neardup job (embedded, its
# default 2 in-process workers) and the peer, in alternating order (odd
# rounds neardup first, even rounds the peer first) so that both meet the
# same machine load; then the median wall and user+sys CPU time of each and
# their ratios.
#
# The peer is bench/peers/minhashlsh (github.com/ekzhu/minhash-lsh, its own
# module, outside neardup's dependencies): it shingles, sketches, indexes
# and queries every document and writes its candidate pairs without
# verifying them (estimate only); neardup also verifies every candidate
# pair by its exact Jaccard similarity.
#
# Usage: scripts/bench-peers.sh CORPUS [THRESHOLD [ROUNDS]]
#   e.g. scripts/bench-peers.sh .cache/bench/corpus-100000-1 0.8 5
# Environment: OUT (work directory, default .cache/bench-peers), NEARDUP_ARGS
# (extra coordinator flags), PEER_ARGS (extra peer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:?usage: scripts/bench-peers.sh CORPUS [THRESHOLD [ROUNDS]]}
threshold=${2:-0.8}
rounds=${3:-5}
mkdir -p "${OUT:-.cache/bench-peers}/bin"
out=$(cd "${OUT:-.cache/bench-peers}" && pwd)
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
go build -buildvcs=false -o "$out/bin/" ./cmd/coordinator
(cd bench/peers/minhashlsh && go build -buildvcs=false -o "$out/bin/peer-minhashlsh" .)

times=$out/times.txt
: > "$times"
run() { # name command...: appends "name wall cpu" to $times
  local name=$1
  shift
  /usr/bin/time -f "$name %e %U %S %M" -o "$out/time.tmp" "$@" > "$out/$name.log" 2>&1
  awk '{printf "%s %.2f %.2f %d\n", $1, $2, $3 + $4, $5}' "$out/time.tmp" | tee -a "$times" |
    awk '{printf "  %-8s %7.2f s wall %7.2f s cpu %8d KiB peak RSS\n", $1, $2, $3, $4}'
}
neardup() { run neardup "$out/bin/coordinator" --overwrite --quiet --threshold "$threshold" --out "$out/neardup-out" ${NEARDUP_ARGS:-} "$corpus"; }
peer() { run peer "$out/bin/peer-minhashlsh" -threshold "$threshold" -out "$out/peer-pairs.tsv" ${PEER_ARGS:-} "$corpus"; }

echo "== $corpus at threshold $threshold, $rounds rounds ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq 1 "$rounds"); do
  echo "round $r"
  if (( r % 2 )); then neardup; peer; else peer; neardup; fi
done

median() { # name column
  awk -v n="$1" -v c="$2" '$1 == n {print $c}' "$times" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
nw=$(median neardup 2) nc=$(median neardup 3) pw=$(median peer 2) pc=$(median peer 3)
echo "== medians of $rounds rounds"
printf "  neardup %7.2f s wall %7.2f s cpu\n" "$nw" "$nc"
printf "  peer    %7.2f s wall %7.2f s cpu\n" "$pw" "$pc"
awk -v nw="$nw" -v nc="$nc" -v pw="$pw" -v pc="$pc" 'BEGIN {printf "  peer / neardup: %.2fx wall, %.2fx cpu\n", pw / nw, pc / nc}'
grep -o 'pairs=[0-9]*' "$out/neardup.log" | tail -1 | sed 's/^/  neardup listed /'
grep -o 'candidate_pairs=[0-9]*' "$out/peer.log" | tail -1 | sed 's/^/  peer found (unverified) /'
