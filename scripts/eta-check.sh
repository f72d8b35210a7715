#!/usr/bin/env bash
# eta-check.sh LOG: how far the job-wide ETA was from the time actually
# left, at the progress event nearest half the job's time. LOG is a
# coordinator's stderr under --log-format json; the job's end is its
# "job complete" record, its start the time of an event less its
# elapsed_s. Prints the event's elapsed_s and eta_s, the time truly left
# and the error (eta_s over the time left, less 1).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 LOG" >&2; exit 2; }
jq -rs '
  def secs: (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) + ((capture("(?<f>\\.[0-9]+)Z$") // {f: ".0"}).f | "0" + . | tonumber);
  (map(select(.msg == "job complete")) | .[0].time | secs) as $fin
  | map(select(.msg == "progress" or .msg == "stage done") | select(.eta_s != null)) as $ev
  | ($ev[0] | (.time | secs) - .elapsed_s) as $start
  | ($fin - $start) as $total
  | ($ev | min_by(((.time | secs) - $start - $total / 2) | fabs)) as $e
  | (($e.time | secs) - $start) as $at
  | ($fin - $start - $at) as $left
  | "job \($total * 10 | round / 10) s; at \($at * 10 | round / 10) s (\($e.stage)): eta_s \($e.eta_s), truly left \($left * 10 | round / 10) s, error \((($e.eta_s / $left - 1) * 1000 | round) / 10)%"
' "$1"
