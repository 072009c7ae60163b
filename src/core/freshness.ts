import type { IngestReport } from './reading.js';
import { formatTs, HOUR } from './time.js';
import { SOURCE_INFO, SOURCES, ZONES, type SourceId } from './zones.js';

export interface SourceFreshness {
  readonly source: SourceId;
  readonly zones: number;
  readonly freshestLagHours: number;
  readonly stalestLagHours: number;
  readonly staleAfterHours: number;
  readonly ok: boolean;
  /** Zones whose own lag exceeds the threshold, with their lag. */
  readonly staleZones: readonly { zone: string; lagHours: number }[];
  readonly zonesWithoutData: number;
}

export interface Freshness {
  readonly ok: boolean;
  readonly sources: readonly SourceFreshness[];
  readonly note: string;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * The freshness verdict of `/v1/status` (decisions.md, "Status and freshness"): a zone's lag is
 * the time from the ts of its newest reading to `now`; a zone with no reading counts from its
 * source's history start; a source is ok when its freshest zone is within the threshold.
 */
export function assessFreshness(
  newestTsByZone: ReadonlyMap<string, number>,
  reports: Partial<Record<SourceId, IngestReport>>,
  nowSeconds: number,
): Freshness {
  const sources = SOURCES.map((source): SourceFreshness => {
    const info = SOURCE_INFO[source];
    const historyStart = Date.parse(info.historyStart) / 1000;
    const zones = ZONES.filter((zone) => zone.source === source);
    const lags = zones.map((zone) => {
      const newest = newestTsByZone.get(zone.code);
      return { zone: zone.code, lagHours: round2((nowSeconds - (newest ?? historyStart)) / HOUR) };
    });
    const values = lags.map((lag) => lag.lagHours);
    const freshest = Math.min(...values);
    return {
      source,
      zones: zones.length,
      freshestLagHours: freshest,
      stalestLagHours: Math.max(...values),
      staleAfterHours: info.staleAfterHours,
      ok: freshest <= info.staleAfterHours,
      staleZones: lags.filter((lag) => lag.lagHours > info.staleAfterHours),
      zonesWithoutData: zones.filter((zone) => !newestTsByZone.has(zone.code)).length,
    };
  });
  return { ok: sources.every((s) => s.ok), sources, note: describe(sources, reports) };
}

function describe(
  sources: readonly SourceFreshness[],
  reports: Partial<Record<SourceId, IngestReport>>,
): string {
  const parts: string[] = [];
  if (sources.every((s) => s.zonesWithoutData === s.zones)) {
    parts.push(
      'no data yet: the store holds no readings; run `gridco2 ingest` or try `gridco2 demo`.',
    );
  } else if (sources.every((s) => s.ok && s.staleZones.length === 0)) {
    parts.push('all sources and zones are within their freshness windows.');
  }
  for (const source of sources) {
    const label = `${source.source}${source.ok ? '' : ' is behind'}`;
    if (source.zonesWithoutData === source.zones) {
      if (!parts[0]?.startsWith('no data yet')) parts.push(`${source.source}: no data yet.`);
    } else if (source.staleZones.length > 0) {
      const zones = source.staleZones.map((z) => `${z.zone} (${z.lagHours} h)`).join(', ');
      parts.push(`${label}; zones over ${source.staleAfterHours} h: ${zones}.`);
    }
  }
  for (const source of SOURCES) {
    const report = reports[source];
    if (!report) continue;
    const errors =
      report.errors.length === 0 ? 'no errors' : `errors: ${report.errors.map(shorten).join('; ')}`;
    // A run that read no zone at all means the upstream is down or unusable, not one bad zone:
    // said first, so that it is not lost in the list of errors.
    const unreadable = report.zones === 0 && report.errors.length > 0;
    parts.push(
      `last ${source} run ${formatTs(report.finishedAt)}: ` +
        (unreadable ? `${source} could not be read, ` : '') +
        `${report.zones} zones, ${report.pointsStored} points stored, ` +
        `${report.incompleteHours} incomplete hours, ${errors}.`,
    );
  }
  return parts.join(' ');
}

/** Keeps the note readable: an upstream error can carry a long (scrubbed) URL. */
const NOTE_ERROR_CHARS = 240;
function shorten(error: string): string {
  return error.length <= NOTE_ERROR_CHARS ? error : `${error.slice(0, NOTE_ERROR_CHARS - 3)}...`;
}
