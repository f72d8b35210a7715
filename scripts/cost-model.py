#!/usr/bin/env python3
"""The cost model (docs/performance.md, "The cost model"): fits each
stage's wall and CPU seconds and bytes read and written, and the job's
peak RSS, work-area peak and output bytes, as a + b*documents from the
cost.json files of scripts/cost-run.sh (least squares; two runs give the
line through them), predicts them at --docs, and with --check FILE
compares the prediction with a run's measured figures.

Usage: scripts/cost-model.py --docs N [--check cost.json] run1/cost.json run2/cost.json ...
"""
import argparse
import json


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def metrics(run):
    m = {("job", k): run[k] for k in ("wall", "cpu", "peak_rss_mib", "work_peak", "output_bytes")}
    for s in run["stages"]:
        for k in ("wall", "cpu", "read", "written"):
            m[(s["stage"], k)] = s[k]
    return m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--docs", type=float, required=True)
    p.add_argument("--check")
    p.add_argument("runs", nargs="+")
    a = p.parse_args()
    runs = [json.load(open(f)) for f in a.runs]
    if len(runs) < 2:
        p.error("at least two runs to fit")
    xs = [r["docs"] for r in runs]
    ms = [metrics(r) for r in runs]
    real = metrics(json.load(open(a.check))) if a.check else {}
    print("%-8s %-13s %14s %14s %14s %8s" % ("stage", "figure", "per 1M docs", "predicted", "measured", "error"))
    for key in ms[0]:
        if not all(key in m for m in ms):
            continue
        c, b = fit(xs, [m[key] for m in ms])
        pred = c + b * a.docs
        meas = real.get(key)
        err = "" if meas in (None, 0) else "%+7.1f%%" % (100 * (pred - meas) / meas)
        print("%-8s %-13s %14.4g %14.4g %14s %8s" % (key[0], key[1], b * 1e6, pred,
                                                   "" if meas is None else "%.4g" % meas, err))


if __name__ == "__main__":
    main()
