import type { Logger } from 'pino';
import type {
  FailureKind,
  GraphCount,
  IngestFailure,
  IngestReport,
  ZoneQuality,
} from '../core/reading.js';
import { floorToHour, HOUR, type Clock, type TimeWindow } from '../core/time.js';
import type { Zone } from '../core/zones.js';
import { systemClock, type UpstreamError } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import type { FlowOutcome, SourceAdapter, SourceGraph, ZoneOutcome } from '../sources/adapter.js';
import { createSourceStop } from './sources.js';
import { PendingChunk } from './pending-chunk.js';
import { addZoneForecasts } from './store-forecasts.js';
import { addZoneMixes } from './store-mixes.js';
import { addZoneReadings } from './store-readings.js';
import type { SourceId } from '../core/sources.js';

/** Every run re-fetches this much before the newest stored hour: upstreams revise (method.md). */
const REVISION_WINDOW_SECONDS = 72 * HOUR;

/** How far back a zone with nothing stored starts; older history is `gridco2 backfill`'s job. */
export const DEFAULT_INITIAL_WINDOW_SECONDS = 7 * 24 * HOUR;

/**
 * The furthest back an hourly run reaches, however stale a zone is: a zone that stopped
 * publishing must not make every run fetch an ever longer window. Older gaps are backfill's job.
 */
const MAX_CATCH_UP_SECONDS = 7 * 24 * HOUR;

/**
 * The longest one run of one source may take. A healthy run of ENTSO-E's 33 zones takes well
 * under a minute; a third of the hourly schedule leaves room for a slow upstream and its retries
 * while a hanging one can no longer hold a run for hours (issue 10, finding 9). Zones not reached
 * keep what is stored and are asked again by the next run.
 */
export const RUN_DEADLINE_MS = 20 * 60_000;

/**
 * The upstream forecasts each run asks (docs/upstreams.md §8.4): from 24 hours back (or from the
 * zone's newest stored hour when it is further back: what a run catches up, it catches up in
 * forecasts too) to 48 hours ahead.
 */
const FORECAST_LOOKBACK_SECONDS = 24 * HOUR;
const FORECAST_HORIZON_SECONDS = 48 * HOUR;

export interface IngestionOptions {
  readonly store: Store;
  readonly adapter: SourceAdapter;
  readonly logger: Logger;
  readonly initialWindowSeconds?: number;
  /** Stops the run between zones (and cuts retry waits short): graceful shutdown. */
  readonly signal?: AbortSignal;
  /** Bound of the whole run on the adapter's clock; RUN_DEADLINE_MS when absent. */
  readonly deadlineMs?: number;
}

/**
 * One ingestion pass of one source: for every zone, fetch from 72 h before its newest stored
 * hour (or the initial window) up to the current hour, compute, and store. A zone whose fetch
 * fails keeps what is stored and does not stop the others, unless the source is given up
 * (createSourceStop). A run ends early at its deadline or on `signal`; the zones it did not reach
 * are reported. The report is stored and logged, also when the run was cut short.
 *
 * Then, when the source has a flow graph (FLOWS, extensions §15-16): its extra nodes, each
 * planned and stored like a zone (no forecasts) but never served, and the flows of every border
 * over the window of the source's freshest zone or node (72 h before its newest stored hour, the
 * initial window on a first run), stored as they come, border by border. A failed node or border
 * never stops the others; the graph has its own stop rule, and is not fetched at all once the
 * source is given up.
 */
export async function runIngestion(options: IngestionOptions): Promise<IngestReport> {
  const { store, adapter, logger, signal } = options;
  const { clock } = adapter;
  const initialWindowSeconds = options.initialWindowSeconds ?? DEFAULT_INITIAL_WINDOW_SECONDS;
  const run = new IngestionRun(options, options.deadlineMs ?? RUN_DEADLINE_MS);
  const startedAt = Math.floor(clock.now() / 1000);
  // The hour in progress is asked for too: GB's forecast half-hour lives there.
  const toTs = floorToHour(startedAt) + HOUR;
  // Ending a run tells the adapter to start no further zone; outcomes it already has (the other
  // zones of a failed or finished EIA query) are still taken, so no answered zone is lost.
  const noFurtherZone = new AbortController();
  const onAbort = () => noFurtherZone.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    const zones = await zoneStarts(store, adapter.zones, toTs, initialWindowSeconds);
    await run.fetchAll(plan(zones, adapter.zonesShareRequests, toTs), noFurtherZone, 'zone');
    const { graph } = adapter;
    if (graph) {
      const nodes = await zoneStarts(store, graph.nodes, toTs, initialWindowSeconds);
      await run.fetchAll(plan(nodes, adapter.zonesShareRequests, toTs), noFurtherZone, 'node');
      const freshest = Math.max(
        ...[...zones.values(), ...nodes.values()].map(({ fromTs }) => fromTs),
      );
      await run.fetchFlows(graph, { fromTs: freshest, toTs }, noFurtherZone);
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  const report = run.report(startedAt, Math.floor(clock.now() / 1000));
  await store.recordIngestReport(report);
  logReport(logger, report);
  logUnknownCodes(logger, report.source, run.unknownCodes());
  return report;
}

/** What a run fetches: a served zone, an extra node of the flow graph, or one of its borders. */
type Part = 'zone' | 'node' | 'border';

/** What one fetch (one zone, or the zones of one shared request) gathers for its one write. */
interface Gathered {
  readonly part: Exclude<Part, 'border'>;
  readonly pending: PendingChunk;
  readonly quality: ZoneQuality[];
  readonly zones: Set<string>;
  forecasts: number;
}

/** Why a run ends before its last zone. */
interface Cut {
  readonly kind: 'interrupted' | 'deadline' | 'stopped';
  readonly why: string;
}

/** One run of one source as it goes: what it stored, where it failed, and whether it was cut. */
class IngestionRun {
  private readonly options: IngestionOptions;
  private readonly deadlineMs: number;
  private readonly deadline: number;
  // Per zone; a zone with a second (mix) feed adds that feed's writes to its counters.
  private readonly quality = new Map<string, ZoneQuality>();
  private readonly withoutData: string[] = [];
  // Failure message → zones it hit: one request of EIA fails all its zones with one message.
  private readonly failures = new Map<string, string[]>();
  // The same by public kind, for the status note.
  private readonly failureKinds = new Map<FailureKind, string[]>();
  private forecastsStored = 0;
  private readonly stopsSource = createSourceStop();
  // The forecast feeds have a stop of their own: their failures never give the source (and its
  // actuals) up, but once the rule trips no further forecast is asked in this run.
  private readonly stopsForecasts = createSourceStop();
  private forecastsGivenUp: string | undefined;
  private readonly tried = new Set<string>();
  private cut: Cut | undefined;
  // The flow graph: its nodes' counters (never the served ones), its flows, and what it tried
  // and failed, by kind, named only in `errors`.
  private readonly nodeQuality = new Map<string, ZoneQuality>();
  private flowsStored = 0;
  private bordersAnswered = 0;
  private readonly graphTried = { node: new Set<string>(), border: new Set<string>() };
  private readonly graphFailureKinds = new Map<FailureKind, GraphHit>();
  // Its own stop: the graph's failures never give the source up, but stop the graph.
  private readonly stopsGraph = createSourceStop();
  private graphGivenUp: string | undefined;

  constructor(options: IngestionOptions, deadlineMs: number) {
    this.options = options;
    this.deadlineMs = deadlineMs;
    this.deadline = options.adapter.clock.now() + deadlineMs;
  }

  /**
   * Fetches each planned window in turn, writing what each fetch gathered once it is done: of
   * served zones (with their forecasts), or of the graph's extra nodes (none).
   */
  async fetchAll(
    planned: readonly Planned[],
    noFurtherZone: AbortController,
    part: Gathered['part'],
  ): Promise<void> {
    const { store, adapter } = this.options;
    const limits = { signal: noFurtherZone.signal, deadline: this.deadline };
    for (const { window, zones, forecastWindow } of planned) {
      if (this.stopped(part)) break;
      const forecasts =
        part === 'zone' && this.forecastsGivenUp === undefined
          ? { window: forecastWindow }
          : undefined;
      const gathered: Gathered = {
        part,
        pending: new PendingChunk(store),
        quality: [],
        zones: new Set(),
        forecasts: 0,
      };
      try {
        for await (const outcome of adapter.fetch(zones, window, limits, forecasts)) {
          (part === 'zone' ? this.tried : this.graphTried.node).add(outcome.zone);
          await this.take(gathered, outcome, window, forecastWindow);
          if (this.stopped(part)) noFurtherZone.abort();
        }
      } finally {
        // What was answered before an interruption is kept, as before it.
        await this.write(gathered);
      }
    }
  }

  private async take(
    gathered: Gathered,
    outcome: ZoneOutcome,
    window: TimeWindow,
    forecastWindow: TimeWindow,
  ): Promise<void> {
    switch (outcome.kind) {
      case 'readings':
      case 'mixes':
        await this.gatherActuals(gathered, outcome, window);
        this.stopIf(gathered.part, outcome);
        return;
      case 'actuals-failed':
        this.fail(outcome.zone, outcome.error.message, outcome.error.failure, gathered.part);
        this.warn({ [gathered.part]: outcome.zone }, outcome.error);
        this.stopIf(gathered.part, outcome);
        return;
      case 'forecasts':
        gathered.forecasts += addZoneForecasts(
          gathered.pending,
          outcome.zone,
          outcome.forecasts,
          forecastWindow,
        );
        gathered.zones.add(outcome.zone);
        this.stopForecastsIf(outcome);
        return;
      case 'forecasts-failed':
        this.fail(outcome.zone, `forecasts: ${outcome.error.message}`, outcome.error.failure);
        this.warn({ zone: outcome.zone, feed: 'forecasts' }, outcome.error);
        this.stopForecastsIf(outcome);
        return;
    }
  }

  /**
   * Fetches the flows of every border of the graph over `window` and stores each border's as it
   * comes (one write each): a border that fails, answers garbage or cannot be stored keeps what
   * is stored and does not stop the others.
   */
  async fetchFlows(
    graph: SourceGraph,
    window: TimeWindow,
    noFurtherZone: AbortController,
  ): Promise<void> {
    if (this.stopped('border')) return;
    const { store, logger, adapter } = this.options;
    const limits = { signal: noFurtherZone.signal, deadline: this.deadline };
    for await (const outcome of graph.fetchFlows(window, limits)) {
      this.graphTried.border.add(outcome.border);
      if (outcome.kind === 'flows') {
        try {
          this.flowsStored += await store.upsertFlows(graph.graph, outcome.flows);
          this.bordersAnswered += 1;
        } catch (error) {
          this.fail(outcome.border, `not stored: ${String(error)}`, 'not-stored', 'border');
          logger.error(
            { source: adapter.source, border: outcome.border, err: error },
            'store failed',
          );
        }
      } else {
        this.fail(outcome.border, outcome.error.message, outcome.error.failure, 'border');
        this.warn({ border: outcome.border }, outcome.error);
      }
      this.stopIf('border', outcome);
      if (this.stopped('border')) noFurtherZone.abort();
    }
  }

  private warn(fields: Record<string, string>, { kind, failure, message }: UpstreamError): void {
    const { adapter, logger } = this.options;
    logger.warn({ source: adapter.source, ...fields, kind, failure }, adapter.scrub(message));
  }

  private async gatherActuals(
    gathered: Gathered,
    outcome: Extract<ZoneOutcome, { kind: 'readings' | 'mixes' }>,
    window: TimeWindow,
  ): Promise<void> {
    const { pending, part } = gathered;
    try {
      if (outcome.kind === 'mixes') {
        gathered.quality.push({
          zone: outcome.zone,
          pointsStored: await addZoneMixes(pending, outcome.zone, outcome, window),
          incompleteHours: 0,
          clampedNegatives: 0,
          unknownCodes: outcome.unknownCodes,
        });
      } else {
        if (outcome.readings.length === 0 && part === 'zone') this.withoutData.push(outcome.zone);
        gathered.quality.push(await addZoneReadings(pending, outcome.zone, outcome, window));
      }
      gathered.zones.add(outcome.zone);
    } catch (error) {
      const { adapter, logger } = this.options;
      this.fail(outcome.zone, `not stored: ${String(error)}`, 'not-stored', part);
      logger.error({ source: adapter.source, [part]: outcome.zone, err: error }, 'store failed');
    }
  }

  // A fetch's readings, mixes and forecasts are written together or not at all.
  private async write({ part, pending, quality, zones, forecasts }: Gathered): Promise<void> {
    try {
      await pending.write();
      const counters = part === 'zone' ? this.quality : this.nodeQuality;
      quality.forEach((zone) => this.addQuality(counters, zone));
      this.forecastsStored += forecasts;
    } catch (error) {
      const { adapter, logger } = this.options;
      for (const zone of zones) this.fail(zone, `not stored: ${String(error)}`, 'not-stored', part);
      logger.error(
        { source: adapter.source, [`${part}s`]: [...zones], err: error },
        'store failed',
      );
    }
  }

  private addQuality(counters: Map<string, ZoneQuality>, zone: ZoneQuality): void {
    const earlier = counters.get(zone.zone);
    counters.set(
      zone.zone,
      earlier
        ? {
            ...earlier,
            pointsStored: earlier.pointsStored + zone.pointsStored,
            unknownCodes: [...new Set([...earlier.unknownCodes, ...zone.unknownCodes])],
          }
        : zone,
    );
  }

  // Each zone once per message and kind: GB's feeds (readings, mix, forecasts) fail alike. A
  // node or border of the flow graph is named in the errors only, counted in the failures.
  private fail(name: string, message: string, kind: FailureKind, part: Part = 'zone'): void {
    const scrubbed = this.options.adapter.scrub(message);
    this.failures.set(scrubbed, [...new Set([...(this.failures.get(scrubbed) ?? []), name])]);
    if (part === 'zone') {
      this.failureKinds.set(kind, [...new Set([...(this.failureKinds.get(kind) ?? []), name])]);
    } else {
      this.graphHit(kind, part, [name]);
    }
  }

  private graphHit(kind: FailureKind, part: Exclude<Part, 'zone'>, names: readonly string[]): void {
    const hit = this.graphFailureKinds.get(kind) ?? { node: new Set(), border: new Set() };
    names.forEach((name) => hit[part].add(name));
    this.graphFailureKinds.set(kind, hit);
  }

  private stopIf(part: Part, outcome: ZoneOutcome | FlowOutcome): void {
    if (part === 'zone') {
      const stop = this.stopsSource(outcome);
      if (stop !== null) this.cut ??= { kind: 'stopped', why: `source given up: ${stop}` };
      return;
    }
    const stop = this.stopsGraph(outcome);
    if (stop !== null && this.graphGivenUp === undefined) {
      this.graphGivenUp = `flow graph given up for this run: ${stop}`;
      this.options.logger.warn({ source: this.options.adapter.source }, this.graphGivenUp);
    }
  }

  /** Whether the run ends here (cut short), or for the flow graph, the graph is given up. */
  private stopped(part: Part): boolean {
    return Boolean((this.cut ??= this.cutShort())) || (part !== 'zone' && !!this.graphGivenUp);
  }

  private stopForecastsIf(outcome: ZoneOutcome): void {
    const stop = this.stopsForecasts(outcome);
    if (stop !== null && this.forecastsGivenUp === undefined) {
      this.forecastsGivenUp = `forecasts given up for this run: ${stop}`;
      this.options.logger.warn({ source: this.options.adapter.source }, this.forecastsGivenUp);
    }
  }

  private cutShort(): Cut | undefined {
    if (this.options.signal?.aborted) return { kind: 'interrupted', why: 'interrupted' };
    if (this.options.adapter.clock.now() >= this.deadline) {
      return {
        kind: 'deadline',
        why: `run deadline of ${Math.round(this.deadlineMs / 1000)} s reached`,
      };
    }
    return undefined;
  }

  /**
   * The run's report: what was stored, what failed, and the zones a cut left untried. The flow
   * graph's nodes and borders a cut left untried are counted with them; once the source is given
   * up the graph is not fetched, which its reason says already.
   */
  report(startedAt: number, finishedAt: number): IngestReport {
    const { adapter, signal } = this.options;
    if (signal?.aborted) this.cut = this.cutShort();
    const errors = [...this.failures].map(([message, zones]) => `${zones.join(', ')}: ${message}`);
    if (this.forecastsGivenUp !== undefined) errors.push(this.forecastsGivenUp);
    const untried = adapter.zones.filter((zone) => !this.tried.has(zone.code));
    const cut = this.cut;
    const { nodes: untriedNodes, borders: untriedBorders, words: graphLeft } = this.graphUntried();
    // The flow graph comes after the zones: a cut among the zones leaves it untried too, said on
    // the same line. A source given up after its last zone never starts it, which the source's
    // reason says already; the graph's own stop has a line of its own.
    let graphStop: FailureKind | undefined;
    if (cut && untried.length > 0) {
      errors.push(
        `${cut.why} after ${this.tried.size} of ${adapter.zones.length} zones; ` +
          `not tried: ${untried.map((zone) => zone.code).join(', ')}` +
          (graphLeft && `, and ${graphLeft}`),
      );
      this.failureKinds.set(cut.kind, [
        ...(this.failureKinds.get(cut.kind) ?? []),
        ...untried.map((zone) => zone.code),
      ]);
      graphStop = cut.kind;
    } else if (this.graphGivenUp !== undefined || (cut && cut.kind !== 'stopped')) {
      if (graphLeft || this.graphGivenUp !== undefined) {
        errors.push(`${this.graphGivenUp ?? cut?.why}${graphLeft && `; not tried: ${graphLeft}`}`);
      }
      graphStop = this.graphGivenUp === undefined ? cut?.kind : 'stopped';
    }
    if (graphStop) {
      this.graphHit(graphStop, 'node', untriedNodes);
      this.graphHit(graphStop, 'border', untriedBorders);
    }
    const stored = [...this.quality.values()];
    return {
      source: adapter.source,
      startedAt,
      finishedAt,
      zones: stored.length,
      pointsStored: sum(stored, (zone) => zone.pointsStored),
      incompleteHours: sum(stored, (zone) => zone.incompleteHours),
      errors,
      quality: stored,
      failures: this.failureList(),
      zonesWithoutData: this.withoutData,
      forecastsStored: this.forecastsStored,
      ...(adapter.graph && {
        graph: {
          graph: adapter.graph.graph,
          nodes: this.nodeQuality.size,
          nodePoints: sum([...this.nodeQuality.values()], (node) => node.pointsStored),
          borders: this.bordersAnswered,
          flowsStored: this.flowsStored,
        },
      }),
    };
  }

  /** The flow graph's nodes and borders not tried, and in words ('' when none). */
  private graphUntried(): { nodes: string[]; borders: string[]; words: string } {
    const { graph } = this.options.adapter;
    const nodes = (graph?.nodes ?? [])
      .map((node) => node.code)
      .filter((code) => !this.graphTried.node.has(code));
    const borders = (graph?.borders ?? []).filter((border) => !this.graphTried.border.has(border));
    const parts = [
      ...(nodes.length > 0 ? [`${plural(nodes.length, 'node')} (${nodes.join(', ')})`] : []),
      ...(borders.length > 0 ? [plural(borders.length, 'border')] : []),
    ];
    return {
      nodes,
      borders,
      words: parts.length > 0 ? `the flow graph's ${parts.join(' and ')}` : '',
    };
  }

  /** The failures by kind: the zones', with the graph's counted beside them, then the graph's. */
  private failureList(): IngestFailure[] {
    const counted = (kind: FailureKind): { graph?: GraphCount } => {
      const hit = this.graphFailureKinds.get(kind);
      if (!hit || hit.node.size + hit.border.size === 0) return {};
      return { graph: { nodes: hit.node.size, borders: hit.border.size } };
    };
    const kinds = [...new Set([...this.failureKinds.keys(), ...this.graphFailureKinds.keys()])];
    return kinds.flatMap((kind) => {
      const zones = this.failureKinds.get(kind) ?? [];
      const graph = counted(kind);
      return zones.length > 0 || graph.graph ? [{ kind, zones, ...graph }] : [];
    });
  }

  /** The unknown production codes of the served zones and of the graph's nodes. */
  unknownCodes(): ZoneQuality[] {
    return [...this.quality.values(), ...this.nodeQuality.values()];
  }
}

/** The nodes and borders of the flow graph one failure kind hit, by name. */
interface GraphHit {
  readonly node: Set<string>;
  readonly border: Set<string>;
}

/** method.md: an unknown production code is booked as other, and logged. */
function logUnknownCodes(logger: Logger, source: SourceId, quality: readonly ZoneQuality[]): void {
  for (const zone of quality) {
    if (zone.unknownCodes.length === 0) continue;
    logger.warn(
      { source, zone: zone.zone, codes: zone.unknownCodes },
      `${zone.zone}: unknown production codes booked as other: ${zone.unknownCodes.join(', ')}`,
    );
  }
}

/** Records that a source did not run because its key is missing, so status readers see why. */
export async function reportDisabledSource(
  store: Store,
  source: SourceId,
  reason: string,
  clock: Clock = systemClock,
): Promise<IngestReport> {
  const now = Math.floor(clock.now() / 1000);
  const report: IngestReport = {
    source,
    startedAt: now,
    finishedAt: now,
    zones: 0,
    pointsStored: 0,
    incompleteHours: 0,
    errors: [`not configured: ${reason}`],
    quality: [],
    failures: [{ kind: 'not-configured', zones: [] }],
    zonesWithoutData: [],
  };
  await store.recordIngestReport(report);
  return report;
}

/** One fetch of a run: its zones, the window of their actuals and of their forecasts. */
interface Planned {
  readonly window: TimeWindow;
  readonly zones: Zone[];
  readonly forecastWindow: TimeWindow;
}

/** Where the windows of a zone's actuals and of its forecasts start. */
interface Starts {
  readonly fromTs: number;
  readonly forecastFromTs: number;
}

/**
 * Where each zone's windows start, from its newest stored hour. `toTs` is the end of the hour in
 * progress.
 */
async function zoneStarts(
  store: Store,
  zones: readonly Zone[],
  toTs: number,
  initialWindowSeconds: number,
): Promise<Map<Zone, Starts>> {
  const nowHour = toTs - HOUR;
  const starts = new Map<Zone, Starts>();
  for (const zone of zones) {
    const newest = await store.newestStoredTs(zone.code);
    const fromTs = Math.min(
      newest === null
        ? toTs - initialWindowSeconds
        : Math.max(floorToHour(newest) - REVISION_WINDOW_SECONDS, toTs - MAX_CATCH_UP_SECONDS),
      toTs - HOUR,
    );
    const forecastFromTs = Math.max(
      fromTs,
      Math.min(newest === null ? fromTs : floorToHour(newest), nowHour - FORECAST_LOOKBACK_SECONDS),
    );
    starts.set(zone, { fromTs, forecastFromTs });
  }
  return starts;
}

/**
 * The window of each zone, and of its upstream forecasts; one shared window when the upstream
 * fetches zones together.
 */
function plan(starts: ReadonlyMap<Zone, Starts>, shareRequests: boolean, toTs: number): Planned[] {
  const forecastToTs = toTs - HOUR + FORECAST_HORIZON_SECONDS;
  if (shareRequests) {
    const all = [...starts.values()];
    if (all.length === 0) return [];
    return [
      {
        window: { fromTs: Math.min(...all.map(({ fromTs }) => fromTs)), toTs },
        zones: [...starts.keys()],
        forecastWindow: {
          fromTs: Math.min(...all.map(({ forecastFromTs }) => forecastFromTs)),
          toTs: forecastToTs,
        },
      },
    ];
  }
  return [...starts].map(([zone, { fromTs, forecastFromTs }]) => ({
    window: { fromTs, toTs },
    zones: [zone],
    forecastWindow: { fromTs: forecastFromTs, toTs: forecastToTs },
  }));
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}

/**
 * The one line per source and run that operators read. Zones that answered without data are a
 * warning, not an error: see the ingest command for why they do not fail it.
 */
function logReport(logger: Logger, report: IngestReport): void {
  const withoutData = report.zonesWithoutData ?? [];
  const line =
    `${report.source}: ${report.zones} zones, ${report.pointsStored} points stored, ` +
    `${report.incompleteHours} incomplete hours, ${plural(report.errors.length, 'error')}` +
    (withoutData.length > 0 ? `, no data returned for ${plural(withoutData.length, 'zone')}` : '') +
    (report.forecastsStored
      ? `, ${plural(report.forecastsStored, 'upstream forecast')} stored`
      : '') +
    (report.graph
      ? `; flow graph ${report.graph.graph}: ${plural(report.graph.nodes, 'node')} ` +
        `(${report.graph.nodePoints} points stored), ${plural(report.graph.borders, 'border')} ` +
        `(${plural(report.graph.flowsStored, 'flow')} stored)`
      : '');
  const fields = {
    source: report.source,
    zones: report.zones,
    pointsStored: report.pointsStored,
    incompleteHours: report.incompleteHours,
    errors: report.errors,
    failures: report.failures,
    zonesWithoutData: withoutData,
    forecastsStored: report.forecastsStored ?? 0,
    ...(report.graph && { graph: report.graph }),
    seconds: report.finishedAt - report.startedAt,
  };
  if (report.errors.length > 0 || withoutData.length > 0) logger.warn(fields, line);
  else logger.info(fields, line);
}
