#!/usr/bin/env python3
"""A standard gradient-boosted model as a yardstick for gridco2's forecasts (issue 19).

Per zone, scikit-learn's HistGradientBoostingRegressor, trained walk-forward on the same issues
(every 6 h) and targets (the lifecycle values in the store) that `gridco2 backtest` scores, seeing
at each issue only what gridco2 sees then (values published by the zone's lag; upstream forecasts
issued before the issue). Scored with the backtest's own rules (src/core/forecast/backtest.ts:
hours ahead, buckets, savings captured of a 4-hour job within 24 h), next to gridco2's forecast as
served on the same issues. Not part of the service: README.md here.

    python3 bench/reference/gbm.py --dump OUT [--zone Z ...] [--csv bench/real-history/csv]
"""

import argparse
import gzip
import json
import os
import sys
import time
from datetime import datetime, timezone

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

H = 3600
DAY = 86400
WEEK = 7 * DAY
HORIZON = 72
BUCKETS = [("1-6", 1, 6), ("7-24", 7, 24), ("25-48", 25, 48), ("49-72", 49, 72)]
JOB, WINDOW = 4, 24
# Walk-forward: refit every RETRAIN_DAYS on every earlier issue whose targets were published by
# then; no forecast before WARMUP_DAYS of issues exist to learn from.
RETRAIN_DAYS = 28
WARMUP_DAYS = 42
# Rows of one issue share most features (72 hours ahead of one newest value): the effective sample
# is the issues, not the rows, and a GBM with default-sized leaves overfits them. Small trees,
# large leaves, a slow rate.
GBM_PARAMS = dict(
    max_iter=300, learning_rate=0.03, max_leaf_nodes=15, min_samples_leaf=200,
    l2_regularization=1.0, early_stopping=False, random_state=0,
)


def load(dump, zone):
    meta = json.load(open(os.path.join(dump, f"{zone}.meta.json")))
    series = pd.read_csv(os.path.join(dump, f"{zone}.series.csv"))
    issues = pd.read_csv(os.path.join(dump, f"{zone}.issues.csv"))
    upstream = {}
    for name in ("wind", "solar"):
        path = os.path.join(dump, f"{zone}.upstream-{name}.csv")
        if os.path.exists(path):
            upstream[name] = pd.read_csv(path)
    return meta, series, issues, upstream


def caiso_day_ahead(csv_dir):
    """CAISO OASIS day-ahead wind and solar from the files, which gridco2 does not read: issued,
    as ENTSO-E's day-ahead is (bench/real-history/README.md), on the day before the market day
    (US/Pacific) at 16:00 UTC (summer) / 17:00 UTC (winter); dump.ts --caiso-day-ahead alike."""
    frame = pd.read_csv(gzip.open(os.path.join(csv_dir, "US-CAISO.csv.gz"), "rt"))
    ts = pd.to_datetime(frame["ts_utc_start"], utc=True)
    local = ts.dt.tz_convert("America/Los_Angeles")
    # The calendar day before (not 24 h before: a day of a clock change is 23 or 25 h long).
    day_before = pd.to_datetime(local.dt.strftime("%Y-%m-%d")) - pd.Timedelta(days=1)
    summer = local.dt.strftime("%Z") == "PDT"
    issued = (day_before + pd.to_timedelta(np.where(summer, 16, 17), unit="h")).dt.tz_localize(
        "UTC"
    )
    out = {}
    for name, column in (("wind", "wind_da_forecast_mw"), ("solar", "solar_da_forecast_mw")):
        keep = frame[column].notna()
        out[name] = pd.DataFrame(
            {
                "ts": (ts[keep].astype("int64") // 10**9).values,
                "issued": (issued[keep].astype("int64") // 10**9).values,
                "value": frame.loc[keep, column].values,
            }
        )
    return out


def grid_of(upstream_frame, ts0, n):
    """Per slot, the value and its issue time (one issue per slot in these files)."""
    value = np.full(n, np.nan)
    issued = np.full(n, np.inf)
    slots = ((upstream_frame["ts"].values - ts0) // H).astype(int)
    ok = (slots >= 0) & (slots < n)
    # The newest issue per slot wins (there is one here, but keep the rule).
    order = np.argsort(upstream_frame["issued"].values[ok], kind="stable")
    value[slots[ok][order]] = upstream_frame["value"].values[ok][order]
    issued[slots[ok][order]] = upstream_frame["issued"].values[ok][order]
    return value, issued


def features(meta, series, issue_times, upstream):
    """One row per (issue, hour ahead 1..72): what the issue could see."""
    ts0 = int(series["ts"].iloc[0])
    y = series["actual"].values.astype(float)
    n = len(y)
    lag = meta["publicationLagSeconds"]
    slots_ts = series["ts"].values
    how_of_slot = ((slots_ts // H) + 72) % 168  # 1970-01-01 was a Thursday: 0 = Monday 00Z
    hod_of_slot = (slots_ts // H) % 24
    up = {name: grid_of(frame, ts0, n) for name, frame in upstream.items()}
    rows = []
    for t in issue_times:
        v = (t - lag - ts0) // H  # first slot the issue cannot see
        past = y[max(0, v - 10 * 168):v]
        past_how = how_of_slot[max(0, v - 10 * 168):v]
        ok = ~np.isnan(past)
        if ok.sum() < 7 * 24:
            continue
        prof = np.full(168, np.nan)
        sums = np.bincount(past_how[ok], weights=past[ok], minlength=168)
        counts = np.bincount(past_how[ok], minlength=168)
        prof[counts > 0] = sums[counts > 0] / counts[counts > 0]
        recent = y[max(0, v - 28 * 24):v]
        recent_hod = hod_of_slot[max(0, v - 28 * 24):v]
        rok = ~np.isnan(recent)
        daily = np.bincount(recent_hod[rok], weights=recent[rok], minlength=24) / np.maximum(
            np.bincount(recent_hod[rok], minlength=24), 1
        )
        visible = np.where(~np.isnan(y[max(0, v - 168):v]))[0]
        if len(visible) == 0:
            continue
        latest_slot = max(0, v - 168) + visible[-1]
        latest = y[latest_slot]
        lags = [y[latest_slot - k] if latest_slot - k >= 0 else np.nan for k in (1, 2, 3, 6, 12, 24)]
        mean24 = np.nanmean(y[max(0, latest_slot - 23):latest_slot + 1])
        mean168 = np.nanmean(y[max(0, latest_slot - 167):latest_slot + 1])
        anomaly = latest - prof[how_of_slot[latest_slot]]
        daily_latest = daily[hod_of_slot[latest_slot]]
        # Each day-ahead against its mean over the last 35 days as issued by then: its departure.
        da_base = {}
        for name, (value, issued) in up.items():
            window = slice(max(0, v - 35 * 24), v)
            seen = issued[window] < t
            da_base[name] = np.nanmean(value[window][seen]) if seen.any() else np.nan
        first = (t - ts0) // H  # hour ahead 1 is the slot starting at the issue
        for h in range(1, HORIZON + 1):
            s = first + h - 1
            if s >= n:
                break
            row = {
                "issue": t, "slot": s, "h": h, "since_latest": s - latest_slot,
                "hod": hod_of_slot[s], "how": how_of_slot[s], "dow": how_of_slot[s] // 24,
                "profile": prof[how_of_slot[s]], "daily": daily[hod_of_slot[s]],
                "latest": latest, "anomaly": anomaly, "mean24": mean24, "mean168": mean168,
                "daily_at_latest": daily_latest,
                # The newest value carried along the daily and the weekly shape (trees cannot
                # subtract one feature from another).
                "daily_shape": latest + daily[hod_of_slot[s]] - daily_latest,
                "weekly_shape": latest + prof[how_of_slot[s]] - prof[how_of_slot[latest_slot]],
                "daily_anchor": daily[hod_of_slot[s]]
                + (latest - daily_latest) * np.exp(-(s - latest_slot) / 24),
                "same_hour_1d": y[s - 24] if s - 24 < v else np.nan,
                "same_hour_7d": y[s - 168] if s - 168 < v else np.nan,
            }
            for k, value in zip((1, 2, 3, 6, 12, 24), lags):
                row[f"lag{k}"] = value
            for name, (value, issued) in up.items():
                row[f"da_{name}"] = value[s] if issued[s] < t else np.nan
                row[f"da_{name}_rel"] = row[f"da_{name}"] - da_base[name]
            row["target"] = y[s]
            rows.append(row)
    return pd.DataFrame(rows)


def walk_forward(frame, lag, feature_names, target_of, back_of):
    """GBM forecasts per row, refitted every RETRAIN_DAYS on rows published by then."""
    forecast = np.full(len(frame), np.nan)
    issues = frame["issue"].values
    target_end = frame["slot_ts"].values + H
    first_issue = issues.min()
    fit_at = first_issue + WARMUP_DAYS * DAY
    fits = 0
    fit_seconds = 0.0
    hours = frame["h"].values
    while fit_at <= issues.max():
        published = (issues < fit_at) & (target_end <= fit_at - lag) & frame["target"].notna().values
        upcoming = (issues >= fit_at) & (issues < fit_at + RETRAIN_DAYS * DAY)
        # One model per horizon bucket (the direct strategy): the hours just ahead, ruled by the
        # newest value, are a twelfth of the rows and lose out in one model of all 72.
        for _, first, last in BUCKETS:
            in_bucket = (hours >= first) & (hours <= last)
            train = published & in_bucket
            model = HistGradientBoostingRegressor(**GBM_PARAMS)
            started = time.process_time()
            model.fit(frame.loc[train, feature_names], target_of(frame.loc[train]))
            fit_seconds += time.process_time() - started
            fits += 1
            serve = upcoming & in_bucket
            if serve.any():
                forecast[serve] = back_of(
                    frame.loc[serve], model.predict(frame.loc[serve, feature_names])
                )
        fit_at += RETRAIN_DAYS * DAY
    return forecast, fits, fit_seconds


def score(frame, column):
    """The backtest's metrics of one forecast column (rows: issue, h, slot)."""
    out = {}
    err = frame["target"] - frame[column]
    ok = err.notna()
    for label, lo, hi in BUCKETS:
        sel = ok & (frame["h"] >= lo) & (frame["h"] <= hi)
        e = err[sel].values
        out[label] = {
            "n": int(sel.sum()),
            "rmse": float(np.sqrt(np.mean(e**2))) if len(e) else np.nan,
            "mae": float(np.mean(np.abs(e))) if len(e) else np.nan,
            "sq": float(np.sum(e**2)),
        }
    achieved = possible = 0.0
    for issue, group in frame.groupby("issue"):
        g = group[group["h"] <= WINDOW].sort_values("h")
        if len(g) < WINDOW or g["h"].iloc[0] != 1:
            continue
        f = g[column].values
        a = g["target"].values
        if np.isnan(f).any() or np.isnan(a).any():
            continue
        fsum = np.convolve(f, np.ones(JOB), "valid")
        asum = np.convolve(a, np.ones(JOB), "valid")
        chosen = asum[int(np.argmin(fsum))]  # earliest on a tie, as the backtest
        achieved += (asum[0] - chosen) / JOB
        possible += (asum[0] - asum.min()) / JOB
    out["savings"] = achieved / possible if possible > 0 else np.nan
    return out


def run_zone(args, zone):
    started = time.time()
    meta, series, issues, upstream = load(args.dump, zone)
    ts0 = int(series["ts"].iloc[0])
    if zone == "US-CAISO" and args.caiso_day_ahead:
        upstream = caiso_day_ahead(args.csv)
    issue_times = np.sort(issues["issue"].unique())
    frame = features(meta, series, issue_times, upstream)
    frame["slot_ts"] = ts0 + frame["slot"] * H
    # gridco2's forecasts of the same issues and slots (as served, and the baselines).
    issues = issues.rename(columns={"ts": "slot_ts"})
    frame = frame.merge(issues, on=["issue", "slot_ts"], how="left")
    base = ["h", "since_latest", "hod", "how", "dow", "profile", "daily", "latest", "anomaly",
            "mean24", "mean168", "same_hour_1d", "same_hour_7d"] + [f"lag{k}" for k in (1, 2, 3, 6, 12, 24)]
    names = base + [c for c in frame.columns if c.startswith("da_")]
    # Trees cannot extrapolate a level they have not seen (a season's drift, an anomaly larger
    # than any in training): the GBM learns the departure from an anchor, as boosting from a
    # baseline does: the four-week hour-of-day mean plus the newest value's departure from it,
    # decaying over 24 h.
    names = names + ["daily_at_latest", "daily_shape", "weekly_shape", "daily_anchor"]
    frame["gbm"], fits, fit_seconds = walk_forward(
        frame, meta["publicationLagSeconds"], names,
        lambda rows: rows["target"] - rows["daily_anchor"],
        lambda rows, predicted: rows["daily_anchor"].values + predicted,
    )
    result = {"zone": zone, "features": names, "fits": fits, "fit_cpu_seconds": round(fit_seconds, 1)}
    scored = frame[frame["gbm"].notna()]
    result["from"] = datetime.fromtimestamp(int(scored["issue"].min()), timezone.utc).isoformat()
    result["to"] = datetime.fromtimestamp(int(scored["issue"].max()), timezone.utc).isoformat()
    result["issues"] = int(scored["issue"].nunique())
    for column in ("served", "gbm", "persistence", "climatology_anomaly"):
        result[column] = score(scored, column)
    late = scored[scored["issue"] >= pd.Timestamp(args.late_from, tz="UTC").timestamp()]
    result["late_from"] = args.late_from
    result["late_issues"] = int(late["issue"].nunique())
    for column in ("served", "gbm", "climatology_anomaly"):
        result[f"late_{column}"] = score(late, column)
    # The whole run's served forecast too: it should reproduce docs/forecast.md's table.
    result["served_all"] = score(frame, "served")
    result["seconds"] = round(time.time() - started, 1)
    if args.keep_rows:
        frame.to_csv(os.path.join(args.dump, f"{zone}.gbm{args.suffix}.csv.gz"), index=False)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", required=True, help="what dump.ts wrote")
    parser.add_argument("--zone", action="append")
    parser.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "..", "real-history", "csv"))
    parser.add_argument("--caiso-day-ahead", action="store_true",
                        help="give US-CAISO the OASIS day-ahead wind and solar, which gridco2 does not read")
    parser.add_argument("--keep-rows", action="store_true", help="write each zone's rows and forecasts")
    parser.add_argument("--suffix", default="")
    parser.add_argument("--late-from", default="2021-01-01",
                        help="also score the issues from this date (the GBM trained on a year)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    zones = args.zone or ["DE", "ES", "NL", "PL", "SE-3", "US-CAISO", "US-ERCOT", "US-ISONE", "US-MISO", "US-PJM"]
    results = []
    for zone in zones:
        result = run_zone(args, zone)
        results.append(result)
        print_zone(result)
        sys.stdout.flush()
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)


def print_zone(r):
    print(f"{r['zone']}: issues {r['issues']} ({r['from'][:10]}..{r['to'][:10]}), {r['fits']} fits, "
          f"{r['fit_cpu_seconds']} s CPU fitting, {r['seconds']} s; features {', '.join(r['features'])}")
    print("  bucket  n       RMSE gridco2  GBM    MAE gridco2  GBM   persistence clim+anom | whole run gridco2 RMSE")
    for label, _, _ in BUCKETS:
        s, g, p, c, a = (r[k][label] for k in ("served", "gbm", "persistence", "climatology_anomaly", "served_all"))
        print(f"  {label:6}  {s['n']:6}  {s['rmse']:8.1f} {g['rmse']:8.1f}  {s['mae']:8.1f} {g['mae']:6.1f}  "
              f"{p['rmse']:8.1f} {c['rmse']:8.1f} | {a['rmse']:6.1f} (n {a['n']})")
    print(f"  from {r['late_from']} ({r['late_issues']} issues): RMSE gridco2 / GBM / clim+anom " + "; ".join(
        f"{label} {r['late_served'][label]['rmse']:.1f} / {r['late_gbm'][label]['rmse']:.1f} / {r['late_climatology_anomaly'][label]['rmse']:.1f}"
        for label, _, _ in BUCKETS) + f"; savings {100 * r['late_served']['savings']:.1f} / {100 * r['late_gbm']['savings']:.1f} / {100 * r['late_climatology_anomaly']['savings']:.1f} %")
    print(f"  savings captured: gridco2 {100 * r['served']['savings']:.1f} %, GBM {100 * r['gbm']['savings']:.1f} %, "
          f"clim+anom {100 * r['climatology_anomaly']['savings']:.1f} %; whole run gridco2 {100 * r['served_all']['savings']:.1f} %")


if __name__ == "__main__":
    main()
