import type { FailureKind, GraphCount, IngestFailure, IngestReport } from './reading.js';
import { formatTs, HOUR } from './time.js';
import { ZONES, type Zone } from './zones.js';
import { SOURCE_INFO, SOURCES, type SourceId } from './sources.js';

interface SourceFreshness {
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
 * source's history start; a source is ok when its freshest zone is within the threshold. `served`:
 * the zones served (with `ZONES=all`, the flow graphs' nodes listed too: extensions §16).
 */
export function assessFreshness(
  newestTsByZone: ReadonlyMap<string, number>,
  reports: Partial<Record<SourceId, IngestReport>>,
  nowSeconds: number,
  served: readonly Zone[] = ZONES,
): Freshness {
  const sources = SOURCES.map((source): SourceFreshness => {
    const info = SOURCE_INFO[source];
    const historyStart = Date.parse(info.historyStart) / 1000;
    const zones = served.filter((zone) => zone.source === source);
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
    if (report) parts.push(describeRun(report));
  }
  return parts.join(' ');
}

/**
 * The public words for each failure kind. The note is read by anyone: it names the source, the
 * kind of failure and our own zone codes, never an upstream's URL or text, which can expose an
 * operator's internal proxy (issue 10, finding 8). The detail is in the logs and the stored
 * report.
 */
const FAILURE_WORDS: Readonly<Record<FailureKind, string>> = {
  timeout: 'upstream timeout',
  unreachable: 'upstream unreachable',
  'rate-limited': 'rate limited',
  'server-error': 'upstream server error',
  auth: 'authentication refused',
  rejected: 'request rejected',
  'invalid-payload': 'invalid payload',
  'no-data': 'no data returned',
  'not-stored': 'not stored',
  'not-configured': 'not configured',
  interrupted: 'run interrupted',
  deadline: 'run deadline reached',
  stopped: 'source given up for this run',
};
/** Kinds that end a run early: their zones are the ones it did not fetch. */
const CUT_SHORT: ReadonlySet<FailureKind> = new Set(['interrupted', 'deadline', 'stopped']);

/** The sentence of one source's last run. */
function describeRun(report: IngestReport): string {
  const { source } = report;
  const when = formatTs(report.finishedAt);
  const failures = report.failures;
  if (failures?.length === 1 && failures[0]?.kind === 'not-configured') {
    return `${source}: not configured (its API key is not set), not ingested.`;
  }
  const withoutData = report.zonesWithoutData ?? [];
  const warning =
    withoutData.length === 0 ? '' : `; warning: no data returned for ${zoneList(withoutData)}`;
  // Reports stored before `failures` existed only hold the raw errors, which stay private.
  const problems = failures
    ? failures.map(describeFailure).join('; ')
    : `${count(report.errors.length, 'error')}, detailed in the ingestion logs`;
  // A run that read no zone at all means the upstream is down or unusable, not one bad zone:
  // said first, so that it is not lost among the counts.
  if (report.zones === 0 && report.errors.length > 0) {
    return `${source}: last run failed: ${problems} (run ${when})${warning}.`;
  }
  const errors = report.errors.length === 0 ? 'no errors' : `errors: ${problems}`;
  return (
    `last ${source} run ${when}: ${report.zones} zones, ${report.pointsStored} points stored, ` +
    `${report.incompleteHours} incomplete hours, ${errors}${warning}.`
  );
}

function describeFailure({ kind, zones: listed, graph }: IngestFailure): string {
  // The flow graph has a stop of its own, which leaves the source's zones alone.
  const words =
    kind === 'stopped' && listed.length === 0 && graph
      ? 'flow graph given up for this run'
      : (FAILURE_WORDS[kind] ?? 'failure');
  // Reports stored before run-ingestion listed each zone once named a zone once per failed feed.
  const zones = [...new Set(listed)];
  const hit = [
    ...(zones.length === 0
      ? []
      : [CUT_SHORT.has(kind) ? count(zones.length, 'zone') : zoneList(zones)]),
    ...(graph ? graphList(graph) : []),
  ];
  if (hit.length === 0) return words;
  const what = hit.join(' and ');
  return CUT_SHORT.has(kind) ? `${words}, ${what} not fetched` : `${words} for ${what}`;
}

/** The flow graph's part of a failure, counted: its extra nodes are no served zones. */
function graphList({ nodes, borders }: GraphCount): string[] {
  return [
    ...(nodes > 0 ? [count(nodes, 'neighbouring area')] : []),
    ...(borders > 0 ? [count(borders, 'flow border')] : []),
  ];
}

/** A few zones by name, more by number. */
function zoneList(zones: readonly string[]): string {
  return zones.length <= 3 ? zones.join(', ') : `${zones.length} zones`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
