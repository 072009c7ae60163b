import { CATEGORIES, cleanShares } from '../../core/factors.js';
import type { ZoneReading } from '../../core/reading.js';
import type { ConsumptionMixPoint, MixPoint } from '../../read/read-model.js';
import { TRACED_CATEGORIES } from '../../core/consumption/trace-hour.js';
import { formatTs } from '../../core/time.js';
import { round1, UNIT } from '../../core/units.js';
import type { ZoneSeries } from '../../read/zone-series.js';

/**
 * Hand-written JSON encoders for the data bodies (history and latest). They exist for two
 * reasons: the contract fixes the member order (`note` sits between `truncated` and `data`,
 * which schema-driven serializers reorder, putting required members first), and these bodies are
 * the hot path. The black-box suite validates every body they produce against the OpenAPI schemas.
 */

export interface HistoryBody {
  readonly zone: string;
  readonly from: number;
  readonly to: number;
  /** Points `start` to `end - 1` of `series`. */
  readonly series: ZoneSeries;
  readonly start: number;
  readonly end: number;
  /** Present only when the window was truncated. */
  readonly note?: string;
}

export function encodeHistory(body: HistoryBody): string {
  const { series, start, end } = body;
  const note = body.note === undefined ? '' : `,"note":${JSON.stringify(body.note)}`;
  const points: string[] = new Array<string>(end - start);
  for (let i = start; i < end; i++) {
    points[i - start] =
      `{"ts":"${formatTs(series.ts(i))}","gco2eq_kwh":${series.value(i)},"method":"${series.method(i)}"}`;
  }
  return (
    `{"zone":${JSON.stringify(body.zone)},"from":"${formatTs(body.from)}","to":"${formatTs(body.to)}",` +
    `"unit":"${UNIT}","count":${end - start},"truncated":${body.note !== undefined}${note},` +
    `"data":[${points.join(',')}]}`
  );
}

export function encodeLatest(readings: readonly ZoneReading[]): string {
  const data = readings.map(
    (reading) =>
      `{"zone":${JSON.stringify(reading.zone)},"ts":"${formatTs(reading.ts)}","gco2eq_kwh":${round1(reading.value)},"method":"${reading.method}"}`,
  );
  return `{"unit":"${UNIT}","data":[${data.join(',')}]}`;
}

/** Category names on the wire: `wind_onshore` for the method's `wind-onshore`. */
export const apiCategory = (category: string): string => category.replaceAll('-', '_');

export interface MixBody {
  readonly zone: string;
  readonly from: number;
  readonly to: number;
  readonly unit: 'MWh' | '%';
  /** The points, each encoded by `encodeMixPoint`. */
  readonly data: readonly string[];
  /** Present only when the window was truncated. */
  readonly note?: string;
}

/** Each category's JSON member name with its colon (`"wind_onshore":`): made once, not per row. */
export const MIX_MEMBER: ReadonlyMap<string, string> = new Map(
  TRACED_CATEGORIES.map((category) => [category, `"${apiCategory(category)}":`]),
);

/** `/v1/mix`: the generation behind each published value, and its renewable and low-carbon shares. */
export function encodeMix(body: MixBody): string {
  const note = body.note === undefined ? '' : `,"note":${JSON.stringify(body.note)}`;
  return (
    `{"zone":${JSON.stringify(body.zone)},"from":"${formatTs(body.from)}","to":"${formatTs(body.to)}",` +
    `"unit":"${body.unit}","count":${body.data.length},"truncated":${body.note !== undefined}${note},` +
    `"data":[${body.data.join(',')}]}`
  );
}

/** One point of `/v1/mix`: encoded apart, so that a long page is encoded a slice at a time. */
export function encodeMixPoint({ ts, mix }: MixPoint): string {
  let generation = '';
  for (const category of CATEGORIES) {
    const amount = mix[category];
    if (amount === undefined) continue;
    generation += `${generation === '' ? '' : ','}${MIX_MEMBER.get(category)!}${round1(amount)}`;
  }
  const { renewablePct, lowCarbonPct } = cleanShares(mix);
  return (
    `{"ts":"${formatTs(ts)}","generation":{${generation}},` +
    `"renewable_pct":${round1(renewablePct)},` +
    `"low_carbon_pct":${round1(lowCarbonPct)}}`
  );
}

/**
 * One point of `/v1/mix` with `accounting=consumption` (extensions §15): what the zone consumed
 * by the category it was generated as, its imports and exports per neighbour, in MWh.
 */
export function encodeConsumptionMixPoint(point: ConsumptionMixPoint): string {
  let consumption = '';
  for (const category of TRACED_CATEGORIES) {
    const amount = point.consumption[category];
    if (amount === undefined) continue;
    consumption += `${consumption === '' ? '' : ','}${MIX_MEMBER.get(category)!}${round1(amount)}`;
  }
  return (
    `{"ts":"${formatTs(point.ts)}","consumption":{${consumption}},` +
    `"imports":${encodeAmounts(point.imports)},"exports":${encodeAmounts(point.exports)},` +
    `"estimated_pct":${round1(point.estimatedPct)},` +
    `"estimated_borders":${JSON.stringify(point.estimatedBorders)},` +
    `"renewable_pct":${round1(point.renewablePct)},` +
    `"low_carbon_pct":${round1(point.lowCarbonPct)}}`
  );
}

/** MWh per neighbour, in tenths as every value is served. */
const encodeAmounts = (amounts: Readonly<Record<string, number>>): string =>
  `{${Object.entries(amounts)
    .map(([zone, amount]) => `${JSON.stringify(zone)}:${round1(amount)}`)
    .join(',')}}`;
