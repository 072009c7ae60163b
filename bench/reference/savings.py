#!/usr/bin/env python3
"""Where a zone's savings captured are lost: the backtest's rule (a 4-hour job placed at the
forecast's lowest 4 hours within the next 24, against starting at once, over the best placement in
hindsight; backtest.ts `jobSaving`) recomputed from a dump of `dump.ts`, by the issue's hour of day
(UTC) and by month, with the savings possible per issue (g/kWh) beside each figure. Not part of the
service: README.md here. Python's standard library only.

    python3 bench/reference/savings.py --dump OUT [--zone Z ...] [--bias-days N]

--bias-days N: a what-if. Each issue's forecast is corrected by its mean error at each hour ahead
over the issues at the same hour of day 3 to N+2 days before (outcomes published by then), and
its savings captured and RMSE over the next 24 hours are printed beside the forecast's own.
"""

import argparse
import csv
import json
import math
import os
import sys
from collections import defaultdict
from datetime import datetime, timezone

JOB_HOURS = 4
WINDOW_HOURS = 24
DAY = 86400


def load(dump, zone):
    with open(os.path.join(dump, f"{zone}.meta.json")) as file:
        step = json.load(file)["step"]
    actual = {}
    with open(os.path.join(dump, f"{zone}.series.csv")) as file:
        for row in csv.DictReader(file):
            if row["actual"]:
                actual[int(row["ts"])] = float(row["actual"])
    served = defaultdict(dict)
    with open(os.path.join(dump, f"{zone}.issues.csv")) as file:
        for row in csv.DictReader(file):
            if row["served"]:
                served[int(row["issue"])][int(row["ts"])] = float(row["served"])
    return step, actual, served


def window_of(issue, step):
    """The slots of the 24 hours from the first slot starting at or after the issue."""
    first = -(-issue // step) * step
    return [first + k * step for k in range(math.ceil(WINDOW_HOURS * 3600 / step))]


def job_saving(slots, forecast, actual, step):
    """(achieved, possible) reductions per slot of the job, or None where a value is missing."""
    if any(slot not in forecast or slot not in actual for slot in slots):
        return None
    job = math.ceil(JOB_HOURS * 3600 / step)
    starts = range(len(slots) - job + 1)
    predicted = [sum(forecast[slots[s + k]] for k in range(job)) for s in starts]
    outcome = [sum(actual[slots[s + k]] for k in range(job)) for s in starts]
    chosen = min(starts, key=lambda s: predicted[s])  # the earliest on a tie, as backtest.ts
    return (outcome[0] - outcome[chosen]) / job, (outcome[0] - min(outcome)) / job


def corrected(issue, served, actual, slots, days):
    """The issue's forecast less its mean error per hour ahead on earlier issues (what-if)."""
    out = dict(served[issue])
    for k, slot in enumerate(slots):
        errors = []
        for day in range(3, 3 + days):
            past = issue - day * DAY
            past_slot = slot - day * DAY
            if past in served and past_slot in served[past] and past_slot in actual:
                errors.append(actual[past_slot] - served[past][past_slot])
        if slot in out and errors and len(errors) >= days // 2:
            out[slot] += sum(errors) / len(errors)
    return out


def report(dump, zone, bias_days):
    step, actual, served = load(dump, zone)
    groups = {"hour": defaultdict(lambda: [0.0, 0.0, 0]), "month": defaultdict(lambda: [0.0, 0.0, 0])}
    total = [0.0, 0.0]
    what_if = [0.0, 0.0, 0.0, 0]
    for issue in sorted(served):
        slots = window_of(issue, step)
        saving = job_saving(slots, served[issue], actual, step)
        if saving is None:
            continue
        achieved, possible = saving
        when = datetime.fromtimestamp(issue, timezone.utc)
        for name, key in (("hour", f"{when.hour:02d}"), ("month", when.strftime("%Y-%m"))):
            group = groups[name][key]
            group[0] += achieved
            group[1] += possible
            group[2] += 1
        total[0] += achieved
        total[1] += possible
        if bias_days:
            forecast = corrected(issue, served, actual, slots, bias_days)
            what_if[0] += job_saving(slots, forecast, actual, step)[0]
            what_if[1] += sum((actual[s] - served[issue][s]) ** 2 for s in slots)
            what_if[2] += sum((actual[s] - forecast[s]) ** 2 for s in slots)
            what_if[3] += len(slots)
    share = lambda achieved, possible: f"{100 * achieved / possible:.1f} %" if possible > 0 else "n/a"
    print(f"{zone}: savings captured {share(*total)} over {sum(g[2] for g in groups['hour'].values())} issues")
    for name in ("hour", "month"):
        cells = [
            f"{key} {share(a, p)} ({p / n:.1f} g)" for key, (a, p, n) in sorted(groups[name].items())
        ]
        print(f"  by issue {name}: " + ", ".join(cells))
    if bias_days:
        a, before, after, n = what_if
        print(
            f"  corrected by the mean error 3 to {bias_days + 2} days before: savings captured "
            f"{share(a, total[1])}, RMSE over the next 24 h {math.sqrt(before / n):.2f} -> "
            f"{math.sqrt(after / n):.2f} g"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", required=True, help="the folder dump.ts wrote")
    parser.add_argument("--zone", action="append", help="a zone (repeatable); default: every dumped zone")
    parser.add_argument("--bias-days", type=int, default=0, help="what-if: correct by the mean error of N days")
    args = parser.parse_args()
    if args.bias_days < 0:
        sys.exit("--bias-days must be 1 or more (0: no what-if)")
    suffix = ".issues.csv"
    dumped = sorted(name[: -len(suffix)] for name in os.listdir(args.dump) if name.endswith(suffix))
    zones = args.zone or dumped
    if not zones:
        sys.exit(f"no dumped zone in {args.dump}: run dump.ts first (README.md)")
    for zone in zones:
        report(args.dump, zone, args.bias_days)


if __name__ == "__main__":
    main()
