import { US_NODES } from '../core/grid-graph/us.js';
import { askedPeriods, eiaEnvelope, parseEiaQuery, type EiaQuery } from './eia-request.js';
import { netFlows, simulatedBorders } from './flow-model.js';
import { EIA_RESPONDENTS } from './node-profiles.js';
import { jsonReply, type SourceReply } from './reply.js';

/**
 * EIA API v2, route `electricity/rto/interchange-data` (docs/upstreams.md §9.4), from the flow
 * model: every pair of the US graph is reported by both of its balancing authorities, each as
 * `fromba` with the other as `toba`, `value` > 0 when `fromba` exports; a foreign neighbour
 * (Canada, Mexico) is only ever `toba`. The two reports of a pair are the same physical flow, so
 * they are exact opposites (the real ones disagree in about a quarter of the hours). `period`
 * labels the hour's END; a reporter publishes at its fuel-type-data lag. Facets `fromba`, `toba`;
 * rows in (period, fromba, toba) order.
 */

export const EIA_INTERCHANGE_ROUTE = '/v2/electricity/rto/interchange-data/data/';
const EIA_INTERCHANGE_DESCRIPTION =
  'Daily interchange between neighboring balancing authorities.  \n    Source: Form EIA-930\n    Product: Hourly Electric Grid Monitor';
const HOUR_MS = 3_600_000;

/** One record of an interchange-data reply, as the real API words it. */
interface EiaInterchangeRow {
  period: string;
  fromba: string;
  'fromba-name': string;
  toba: string;
  'toba-name': string;
  value?: string;
  'value-units'?: string;
}

/** One balancing authority's report of one pair, in every hour. */
interface Report {
  readonly fromba: string;
  readonly frombaName: string;
  readonly toba: string;
  readonly tobaName: string;
  /** Index of the pair in `simulatedBorders('us')`. */
  readonly border: number;
  /** +1 when the reporter is the pair's `a` (a -> b positive), else -1. */
  readonly sign: 1 | -1;
  readonly publicationLagMs: number;
}

/** Every report, in (fromba, toba) order. */
const REPORTS: readonly Report[] = (() => {
  const reporters = new Map(EIA_RESPONDENTS.map((profile) => [profile.zone, profile]));
  const nodes = new Map(US_NODES.map((node) => [node.code, node]));
  const codeOf = (code: string) => nodes.get(code)?.upstreamId ?? code;
  // The names EIA reports under; a foreign neighbour under the graph's.
  const nameOf = (code: string) => reporters.get(code)?.respondentName ?? nodes.get(code)?.name;
  return simulatedBorders('us')
    .flatMap(({ a, b }, border) =>
      (
        [
          [a, b, 1],
          [b, a, -1],
        ] as const
      ).flatMap(([from, to, sign]): Report[] => {
        const reporter = reporters.get(from);
        if (!reporter) return [];
        return [
          {
            fromba: codeOf(from),
            frombaName: nameOf(from) ?? from,
            toba: codeOf(to),
            tobaName: nameOf(to) ?? to,
            border,
            sign,
            publicationLagMs: reporter.publicationLagMs,
          },
        ];
      }),
    )
    .sort((x, y) =>
      x.fromba !== y.fromba ? (x.fromba < y.fromba ? -1 : 1) : x.toba < y.toba ? -1 : 1,
    );
})();

/** A page of interchange-data, or the API's refusal of an invalid query. */
export function answerInterchange(
  query: URLSearchParams,
  seed: number,
  nowMs: number,
): SourceReply {
  const parsed = parseEiaQuery(query, ['fromba', 'toba'], ['period', 'fromba', 'toba']);
  if (typeof parsed === 'string') return jsonReply(400, { error: parsed, code: 400 });
  const { facets, ...request } = parsed;
  const fromba = facets.fromba ? new Set(facets.fromba) : null;
  const toba = facets.toba ? new Set(facets.toba) : null;
  const reports = REPORTS.filter(
    (report) => (!fromba || fromba.has(report.fromba)) && (!toba || toba.has(report.toba)),
  );
  const { rows, total } = pageRows(request, reports, seed, nowMs);
  return jsonReply(
    200,
    eiaEnvelope(request, rows, total, EIA_INTERCHANGE_DESCRIPTION, EIA_INTERCHANGE_ROUTE),
  );
}

function pageRows(
  request: EiaQuery,
  reports: readonly Report[],
  seed: number,
  nowMs: number,
): { rows: EiaInterchangeRow[]; total: number } {
  const publishedUntil = reports.map(
    (report) => Math.floor((nowMs - report.publicationLagMs) / HOUR_MS) * HOUR_MS,
  );
  const lastPeriodMs = Math.min(request.lastPeriodMs, Math.max(...publishedUntil, 0));
  const rows: EiaInterchangeRow[] = [];
  let total = 0;
  for (const periodMs of askedPeriods(request, lastPeriodMs)) {
    let flows: Float64Array | undefined;
    for (let r = 0; r < reports.length; r++) {
      if (periodMs > (publishedUntil[r] as number)) continue;
      const position = total++;
      if (position < request.offset || rows.length >= request.length) continue;
      const report = reports[r] as Report;
      const row: EiaInterchangeRow = {
        period: new Date(periodMs).toISOString().slice(0, 13),
        fromba: report.fromba,
        'fromba-name': report.frombaName,
        toba: report.toba,
        'toba-name': report.tobaName,
      };
      if (request.withValues) {
        flows ??= netFlows('us', seed, periodMs - HOUR_MS);
        const value = report.sign * (flows[report.border] as number);
        // Rounded away from zero either way, so that the two reports stay exact opposites.
        row.value = String(Math.sign(value) * Math.round(Math.abs(value)) || 0);
        row['value-units'] = 'megawatthours';
      }
      rows.push(row);
    }
  }
  return { rows, total };
}
