/**
 * Writes what the GBM yardstick (gbm.py, README.md here) needs from a store that `npm run
 * bench:forecast -- --keep DIR` left: per zone, the lifecycle values the backtest scores
 * against, the upstream forecasts with their issue times, and every issue's forecast as served
 * (and the baselines'), from the same walk-forward `gridco2 backtest` runs (issue times every
 * 6 h over the bench's window). So the yardstick is trained and scored on exactly the targets
 * and issues gridco2 is.
 *
 * `npx tsx bench/reference/dump.ts --store DIR/real.db --out OUT [--zone Z ...]`
 *
 * `--caiso-day-ahead`: a what-if. US-CAISO's CAISO OASIS day-ahead wind and solar (in the files,
 * not read by gridco2: no US upstream publishes them to it) are handed to gridco2's models as
 * the upstream wind and solar, issued as gbm.py's flag of that name issues them, to measure what
 * gridco2's own candidates make of the inputs that give the GBM its lead there.
 *
 * `--candidates`: every candidate's forecast too, a column each (named by model id), to study
 * other ways of combining them on the same issues.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  backtestZone,
  type IssueForecasts,
  issueTimes,
  ISSUE_EVERY_HOURS,
} from '../../src/core/forecast/backtest.js';
import { SERVED } from '../../src/core/forecast/walk-forward.js';
import { CLIMATOLOGY_ANOMALY, PERSISTENCE } from '../../src/core/forecast/baselines.js';
import { CANDIDATE_MODELS, LOOKBACK_SECONDS } from '../../src/core/forecast/models.js';
import {
  DAY_SECONDS,
  HORIZON_HOURS,
  HOUR_SECONDS,
  IssuedSeries,
} from '../../src/core/forecast/series.js';
import { type ZoneInputs, ZoneState } from '../../src/core/forecast/zone-state.js';
import { loadZoneInputs } from '../../src/forecast/inputs.js';
import { createStore } from '../../src/storage/create-store.js';
import { loadRealHistory, realHistoryZones } from '../real-history/history.js';

/** The bench's window (bench/forecast-real.ts) and runBacktest's alignment and warm-up. */
const FROM = Date.parse('2020-01-01T00:00Z') / 1000;
const LAST_ISSUE = Date.parse('2021-06-27T23:00Z') / 1000;
const alignToIssue = (ts: number): number =>
  Math.floor(ts / (ISSUE_EVERY_HOURS * HOUR_SECONDS)) * ISSUE_EVERY_HOURS * HOUR_SECONDS;

const cell = (value: number | undefined): string =>
  value === undefined || Number.isNaN(value) ? '' : String(Math.round(value * 1e4) / 1e4);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string) => args[args.indexOf(name) + 1];
  const storePath = option('--store');
  const out = option('--out');
  if (!args.includes('--store') || !args.includes('--out') || !storePath || !out) {
    throw new Error('usage: dump.ts --store DIR/real.db --out OUT [--zone Z ...]');
  }
  const zones = args.flatMap((arg, i) => (arg === '--zone' ? [args[i + 1]!] : []));
  mkdirSync(out, { recursive: true });
  const store = await createStore(`sqlite:${storePath}`);
  try {
    for (const zone of zones.length > 0 ? zones : realHistoryZones()) {
      const toTs = alignToIssue(LAST_ISSUE);
      const first = (await store.readingsInWindow(zone, 0, toTs, 1))[0];
      if (!first) {
        // A store of other files (`bench:forecast --history`) may hold only some of the zones.
        if (zones.length > 0) throw new Error(`${zone}: no readings in the store`);
        process.stderr.write(`${zone}: no readings in the store, skipped\n`);
        continue;
      }
      const fromTs = Math.max(
        alignToIssue(FROM),
        alignToIssue(first.ts + 14 * DAY_SECONDS + DAY_SECONDS - 1),
      );
      const stored = await loadZoneInputs(store, zone, 'lifecycle', {
        fromTs: fromTs - LOOKBACK_SECONDS,
        upstreamFromTs: fromTs - LOOKBACK_SECONDS,
        gridEndTs: toTs + (HORIZON_HOURS + 1) * HOUR_SECONDS,
      });
      const inputs =
        zone === 'US-CAISO' && args.includes('--caiso-day-ahead')
          ? withCaisoDayAhead(stored)
          : stored;
      let kept: readonly IssueForecasts[] = [];
      const started = Date.now();
      backtestZone(zone, 'lifecycle', new ZoneState(inputs), {
        issueTimes: issueTimes(fromTs, toTs),
        candidates: CANDIDATE_MODELS,
        onIssues: (issues) => (kept = issues),
      });
      const { startTs, step, values } = inputs.actual;
      const slotTs = (slot: number) => startTs + slot * step;
      const series = ['ts,actual,generation'];
      values.forEach((value, slot) =>
        series.push(`${slotTs(slot)},${cell(value)},${cell(inputs.generation?.values[slot])}`),
      );
      writeFileSync(join(out, `${zone}.series.csv`), `${series.join('\n')}\n`);
      for (const [name, upstream] of Object.entries(inputs.upstream)) {
        const data = (upstream as IssuedSeries).toData();
        const lines = ['ts,issued,value'];
        for (let slot = 0; slot < data.grid.length; slot++) {
          for (let entry = data.offsets[slot]!; entry < data.offsets[slot + 1]!; entry++) {
            lines.push(`${slotTs(slot)},${data.issued[entry]},${cell(data.values[entry])}`);
          }
        }
        writeFileSync(join(out, `${zone}.upstream-${name}.csv`), `${lines.join('\n')}\n`);
      }
      const extra = args.includes('--candidates')
        ? CANDIDATE_MODELS.filter((model) => kept[0]?.values.has(model.id)).map(({ id }) => id)
        : [];
      const issues = [['issue,ts,served,persistence,climatology_anomaly', ...extra].join(',')];
      for (const issue of kept) {
        const served = issue.values.get(SERVED)!;
        const persistence = issue.values.get(PERSISTENCE.id)!;
        const anomaly = issue.values.get(CLIMATOLOGY_ANOMALY.id)!;
        const columns = extra.map((id) => issue.values.get(id));
        served.forEach((value, i) =>
          issues.push(
            `${issue.issueTs},${slotTs(issue.visibleEnd + i)},${cell(value)},` +
              `${cell(persistence[i])},${cell(anomaly[i])}` +
              columns.map((column) => `,${cell(column?.[i])}`).join(''),
          ),
        );
      }
      writeFileSync(join(out, `${zone}.issues.csv`), `${issues.join('\n')}\n`);
      writeFileSync(
        join(out, `${zone}.meta.json`),
        `${JSON.stringify({ zone, publicationLagSeconds: inputs.publicationLagSeconds, step, fromTs, toTs })}\n`,
      );
      process.stderr.write(
        `${zone}: ${kept.length} issues, backtest ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
      );
    }
  } finally {
    await store.close();
  }
}

/**
 * The files' US-CAISO day-ahead wind and solar as upstream forecasts, each market day's (US/
 * Pacific) issued the day before at 16:00 UTC in summer, 17:00 UTC in winter; the files' total
 * generation (storage left out, as inputs.ts does) as the shares' denominator.
 */
function withCaisoDayAhead(inputs: ZoneInputs): ZoneInputs {
  const history = loadRealHistory().find(({ zone }) => zone === 'US-CAISO')!;
  const { startTs, step, values } = inputs.actual;
  const grid = { startTs, step, length: values.length };
  const local = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    timeZoneName: 'short',
  });
  const issuedOf = (ts: number): number => {
    const parts = Object.fromEntries(
      local.formatToParts(new Date(ts * 1000)).map(({ type, value }) => [type, value]),
    );
    const day = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day)) / 1000;
    return day - DAY_SECONDS + (parts.timeZoneName === 'PDT' ? 16 : 17) * HOUR_SECONDS;
  };
  const series = (column: 'wind_da_forecast_mw' | 'solar_da_forecast_mw') => {
    const forecast = history.forecasts.get(column)!;
    const rows: { ts: number; issuedAt: number; value: number }[] = [];
    history.hours.forEach((ts, i) => {
      if (!Number.isNaN(forecast[i]!))
        rows.push({ ts, issuedAt: issuedOf(ts), value: forecast[i]! });
    });
    return IssuedSeries.build(rows, grid);
  };
  const total = new Float64Array(values.length).fill(Number.NaN);
  history.hours.forEach((ts, i) => {
    const slot = (ts - startTs) / step;
    if (slot < 0 || slot >= total.length) return;
    let sum = 0;
    for (const [column, mwh] of history.generation) {
      if (column !== 'other' && mwh[i]! > 0) sum += mwh[i]!;
    }
    total[slot] = sum;
  });
  return {
    ...inputs,
    upstream: {
      ...inputs.upstream,
      wind: series('wind_da_forecast_mw'),
      solar: series('solar_da_forecast_mw'),
    },
    generation: { startTs, step, values: total },
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
  process.exitCode = 1;
});
