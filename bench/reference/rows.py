#!/usr/bin/env python3
"""Figures for docs/forecast.md's yardstick section from the rows `gbm.py --keep-rows` leaves
(DUMP/ZONE.gbm.csv.gz: every issue's features, outcome, gridco2's forecast as served and the
GBM's), scored by gbm.py's own `score`. Not part of the service: README.md here.

    python3 bench/reference/rows.py --dump OUT mean [--zone Z ...]
    python3 bench/reference/rows.py --dump OUT settings --zone DE --zone SE-3 --zone US-ERCOT
    python3 bench/reference/rows.py --dump OUT shuffle --zone DE --zone PL --zone US-PJM

mean: the mean of gridco2's and the GBM's forecasts against gridco2's alone, on the GBM's issues
and on those from 2021-01-01. settings: one GBM per setting fitted once on what was published by
2021-01-01 and scored on the issues from then (gbm.py's setting, scikit-learn's defaults, the
value itself as the target, one model for all 72 hours, 600 trees). shuffle: gbm.py's setting
fitted once on what was published by 2021-04-01, scored at 25-72 h on the issues from then, and
the rise of that RMSE when one feature at a time is shuffled (seed 0); the anchor the model's
departure is added back to is not shuffled.
"""

import argparse
import json
import os
import sys

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gbm  # noqa: E402

ZONES = ["DE", "ES", "NL", "PL", "SE-3", "US-CAISO", "US-ERCOT", "US-ISONE", "US-MISO", "US-PJM"]
BASE = ["h", "since_latest", "hod", "how", "dow", "profile", "daily", "latest", "anomaly",
        "mean24", "mean168", "same_hour_1d", "same_hour_7d"] + [f"lag{k}" for k in (1, 2, 3, 6, 12, 24)]


def utc(day):
    return pd.Timestamp(day, tz="UTC").timestamp()


def feature_names(frame):
    """gbm.py's run_zone's list, in its order."""
    return (BASE + [c for c in frame.columns if c.startswith("da_")]
            + ["daily_at_latest", "daily_shape", "weekly_shape", "daily_anchor"])


def line(scores):
    return " ".join(f"{label} {scores[label]['rmse']:.1f}" for label, _, _ in gbm.BUCKETS) + (
        f" savings {100 * scores['savings']:.1f} %")


def against(scores, reference):
    return " ".join(f"{label} {100 * (scores[label]['rmse'] / reference[label]['rmse'] - 1):+.1f} %"
                    for label, _, _ in gbm.BUCKETS)


def published_by(frame, at, lag):
    return frame[(frame["issue"] < at) & (frame["slot_ts"] + gbm.H <= at - lag) & frame["target"].notna()]


def fit(rows, names, params, target):
    y = rows["target"] - rows["daily_anchor"] if target == "departure" else rows["target"]
    return HistGradientBoostingRegressor(**params).fit(rows[names], y)


def predict(model, rows, names, target):
    p = model.predict(rows[names])
    return p + rows["daily_anchor"].values if target == "departure" else p


def mean(zone, frame, scored, lag):
    scored = scored.assign(both=(scored["served"] + scored["gbm"]) / 2)
    for label, rows in (("GBM's issues", scored), ("from 2021-01-01", scored[scored["issue"] >= utc("2021-01-01")])):
        served, both = gbm.score(rows, "served"), gbm.score(rows, "both")
        print(f"{zone} {label}: gridco2 {line(served)} | mean of both {line(both)} | RMSE against gridco2 {against(both, served)}")


SETTINGS = {
    "gbm.py": (gbm.GBM_PARAMS, "departure", False),
    "defaults": (dict(random_state=0), "departure", False),
    "value": (gbm.GBM_PARAMS, "value", False),
    "one model": (gbm.GBM_PARAMS, "departure", True),
    "600 trees": (dict(gbm.GBM_PARAMS, max_iter=600), "departure", False),
}


def settings(zone, frame, scored, lag):
    at = utc("2021-01-01")
    train = published_by(frame, at, lag)
    test = scored[scored["issue"] >= at].copy()
    names = feature_names(frame)
    served = gbm.score(test, "served")
    print(f"{zone} from 2021-01-01 ({test['issue'].nunique()} issues; fitted once on {len(train)} rows): gridco2 {line(served)}")
    for name, (params, target, one) in SETTINGS.items():
        ranges = [(1, gbm.HORIZON)] if one else [(first, last) for _, first, last in gbm.BUCKETS]
        forecast = np.full(len(test), np.nan)
        for first, last in ranges:
            model = fit(train[train["h"].between(first, last)], names, params, target)
            serve = test["h"].between(first, last).values
            forecast[serve] = predict(model, test[serve], names, target)
        scores = gbm.score(test.assign(setting=forecast), "setting")
        print(f"  {name:9} {line(scores)} | RMSE against gridco2 {against(scores, served)}")


def shuffle(zone, frame, scored, lag):
    at = utc("2021-04-01")
    train = published_by(frame, at, lag)
    test = scored[(scored["issue"] >= at) & (scored["h"] >= 25)].reset_index(drop=True)
    names = feature_names(frame)
    models = [(first, last, fit(train[train["h"].between(first, last)], names, gbm.GBM_PARAMS, "departure"))
              for _, first, last in gbm.BUCKETS[2:]]

    def rmse(features):
        p = np.full(len(test), np.nan)
        for first, last, model in models:
            serve = test["h"].between(first, last).values
            p[serve] = model.predict(features.loc[serve, names]) + test.loc[serve, "daily_anchor"].values
        e = test["target"].values - p
        return float(np.sqrt(np.nanmean(e**2)))

    base = rmse(test)
    rng = np.random.default_rng(0)
    rises = []
    for name in names:
        shuffled = test.copy()
        shuffled[name] = rng.permutation(shuffled[name].values)
        rises.append((rmse(shuffled) - base, name))
    rises.sort(reverse=True)
    print(f"{zone} 25-72 h from 2021-04-01 ({test['issue'].nunique()} issues), RMSE {base:.1f}; shuffled: "
          + ", ".join(f"{name} {rise:+.1f}" for rise, name in rises[:6]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", required=True, help="what dump.ts wrote and gbm.py --keep-rows added to")
    parser.add_argument("--zone", action="append")
    parser.add_argument("what", choices=["mean", "settings", "shuffle"])
    args = parser.parse_args()
    for zone in args.zone or ZONES:
        frame = pd.read_csv(os.path.join(args.dump, f"{zone}.gbm.csv.gz"))
        lag = json.load(open(os.path.join(args.dump, f"{zone}.meta.json")))["publicationLagSeconds"]
        {"mean": mean, "settings": settings, "shuffle": shuffle}[args.what](zone, frame, frame[frame["gbm"].notna()], lag)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
