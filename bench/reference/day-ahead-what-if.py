#!/usr/bin/env python3
"""A what-if for zones whose real history has no day-ahead wind and solar forecast: writes copies
of bench/real-history's files with `wind_da_forecast_mw` and `solar_da_forecast_mw` made from the
hour's actual wind (onshore and offshore) and solar generation times (1 + a relative error). The
error is slowly varying, as a day-ahead forecast's is: an hourly AR(1) with a correlation of 0.95
and a standard deviation of 15 % for wind and 10 % for solar (seed 1). Not a forecast anyone
published: it measures what such a signal is worth to gridco2's models, through the same replay
(`npm run bench:forecast -- --history OUT`). Not part of the service: README.md here. Python's
standard library only.

    python3 bench/reference/day-ahead-what-if.py --out OUT [--zone Z ...] [--wind-error 0.15] [--solar-error 0.10]
"""

import argparse
import csv
import gzip
import math
import os
import random

HISTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "real-history", "csv")
CORRELATION = 0.95


def value(text):
    return float(text) if text else 0.0


def write_zone(zone, out, wind_error, solar_error):
    rng = random.Random(1)
    with gzip.open(os.path.join(HISTORY, f"{zone}.csv.gz"), "rt", newline="") as file:
        rows = list(csv.reader(file))
    header = rows[0]
    column = header.index
    innovation = math.sqrt(1 - CORRELATION**2)
    wind_miss = solar_miss = 0.0
    for row in rows[1:]:
        wind_miss = CORRELATION * wind_miss + innovation * rng.gauss(0, wind_error)
        solar_miss = CORRELATION * solar_miss + innovation * rng.gauss(0, solar_error)
        if row[column("wind_onshore")] or row[column("wind_offshore")]:
            wind = value(row[column("wind_onshore")]) + value(row[column("wind_offshore")])
            row[column("wind_da_forecast_mw")] = f"{max(0.0, wind * (1 + wind_miss)):.1f}"
        if row[column("solar")]:
            solar = value(row[column("solar")])
            row[column("solar_da_forecast_mw")] = f"{max(0.0, solar * (1 + solar_miss)):.1f}"
    with open(os.path.join(out, f"{zone}.csv"), "w", newline="") as file:
        csv.writer(file).writerows(rows)
    print(f"{zone}: {len(rows) - 1} hours written to {os.path.join(out, zone + '.csv')}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the folder to write <zone>.csv files into")
    parser.add_argument("--zone", action="append", help="DE, ES, NL or PL (repeatable); default all four")
    parser.add_argument("--wind-error", type=float, default=0.15)
    parser.add_argument("--solar-error", type=float, default=0.10)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for zone in args.zone or ["DE", "ES", "NL", "PL"]:
        write_zone(zone, args.out, args.wind_error, args.solar_error)


if __name__ == "__main__":
    main()
