import type { Reading, ZoneReading } from '../core/reading.js';
import { formatTs } from '../core/time.js';

/**
 * Hand-written JSON encoders for the data bodies (history and latest). They exist for two
 * reasons: the contract fixes the member order (`note` sits between `truncated` and `data`,
 * which schema-driven serializers reorder, putting required members first), and these bodies are
 * the hot path. The black-box suite validates every body they produce against the OpenAPI schemas.
 */

const UNIT = 'gCO2eq/kWh';

/** Served values carry 1 decimal (decisions.md, "Numbers"). */
export const round1 = (value: number): number => Number(value.toFixed(1));

const encodeReading = (reading: Reading): string =>
  `{"ts":"${formatTs(reading.ts)}","gco2eq_kwh":${round1(reading.value)},"method":"${reading.method}"}`;

const encodeZoneReading = (reading: ZoneReading): string =>
  `{"zone":${JSON.stringify(reading.zone)},"ts":"${formatTs(reading.ts)}","gco2eq_kwh":${round1(reading.value)},"method":"${reading.method}"}`;

export interface HistoryBody {
  readonly zone: string;
  readonly from: number;
  readonly to: number;
  readonly readings: readonly Reading[];
  /** Present only when the window was truncated. */
  readonly note?: string;
}

export function encodeHistory(body: HistoryBody): string {
  const note = body.note === undefined ? '' : `,"note":${JSON.stringify(body.note)}`;
  return (
    `{"zone":${JSON.stringify(body.zone)},"from":"${formatTs(body.from)}","to":"${formatTs(body.to)}",` +
    `"unit":"${UNIT}","count":${body.readings.length},"truncated":${body.note !== undefined}${note},` +
    `"data":[${body.readings.map(encodeReading).join(',')}]}`
  );
}

export function encodeLatest(readings: readonly ZoneReading[]): string {
  return `{"unit":"${UNIT}","data":[${readings.map(encodeZoneReading).join(',')}]}`;
}
