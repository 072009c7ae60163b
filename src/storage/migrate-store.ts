import type { IngestReport, Mix, StoredReading } from '../core/reading.js';
import { ZONES } from '../core/zones.js';
import { type Store, storedPages } from './store.js';
import type { SourceId } from '../core/sources.js';

export interface MigrateProgress {
  /** Rows read from the source so far. */
  readonly scanned: number;
  /** Rows the target did not have as they are, written so far. */
  readonly written: number;
  /** Registry zones whose rows are all read (the scan goes zone by zone, in key order). */
  readonly zonesDone: number;
  readonly zonesTotal: number;
}

export interface MigrateResult {
  readonly scanned: number;
  readonly written: number;
  /** Rows the target already held with the same content, left untouched. */
  readonly unchanged: number;
  /** Latest ingestion reports copied: the target had none of that source, or an older one. */
  readonly reportsCopied: number;
}

export interface MigrateOptions {
  /** Rows per page of the scan and at most per write transaction (default 5000). */
  readonly pageRows?: number;
  readonly onProgress?: (progress: MigrateProgress) => void;
}

// Zone codes are ASCII, so the default sort is the bytewise order scanStored follows.
const REGISTRY_CODES = ZONES.map((zone) => zone.code).sort();

/**
 * Copies every stored row (complete or not, with its mix) and the latest ingestion report of each
 * source from one store to another. Rows the target already holds unchanged are not written, so a
 * second run writes nothing and leaves the target's data version alone (serving instances do not
 * reload). Rows only the target has are kept. Pages by key, so memory stays bounded. Refuses,
 * before writing anything, to copy between a store marked synthetic and one that is not.
 */
export async function migrateStore(
  from: Store,
  to: Store,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  await checkSameKind(from, to);
  const pageRows = options.pageRows ?? 5000;
  let scanned = 0;
  let written = 0;
  for await (const page of storedPages(from, pageRows)) {
    const last = page.at(-1)!;
    const changed = await rowsToWrite(to, page);
    await to.upsertReadings(changed);
    scanned += page.length;
    written += changed.length;
    options.onProgress?.({
      scanned,
      written,
      zonesDone: REGISTRY_CODES.filter((code) => code < last.zone).length,
      zonesTotal: REGISTRY_CODES.length,
    });
  }
  options.onProgress?.({
    scanned,
    written,
    zonesDone: REGISTRY_CODES.length,
    zonesTotal: REGISTRY_CODES.length,
  });
  const reportsCopied = await copyLatestReports(from, to);
  return { scanned, written, unchanged: scanned - written, reportsCopied };
}

/**
 * Real and synthetic data never share a store (docs/api.md, "Data rules"), so a copy goes only
 * between two stores of the same kind. A target that is new is refused too: marking it synthetic
 * would turn the database meant for real data into one `gridco2 serve` refuses.
 */
async function checkSameKind(from: Store, to: Store): Promise<void> {
  const [fromSynthetic, toSynthetic] = await Promise.all([from.isSynthetic(), to.isSynthetic()]);
  if (fromSynthetic && !toSynthetic) {
    throw new Error(
      'the source holds synthetic demo data and the target is not a demo store: ' +
        'synthetic data is never copied into a store for real data',
    );
  }
  if (!fromSynthetic && toSynthetic) {
    throw new Error(
      'the target holds synthetic demo data and the source does not: ' +
        'real data is never copied into a demo store',
    );
  }
}

/** The rows of a page (ordered by zone, ts) that the target lacks or holds differently. */
async function rowsToWrite(to: Store, page: readonly StoredReading[]): Promise<StoredReading[]> {
  const changed: StoredReading[] = [];
  for (const rows of runsOfOneZone(page)) {
    const first = rows[0]!;
    const held = await to.readStored(first.zone, first.ts, rows.at(-1)!.ts + 1);
    const heldByTs = new Map(held.map((row) => [row.ts, row]));
    for (const row of rows) {
      const existing = heldByTs.get(row.ts);
      if (!existing || !sameReading(existing, row)) changed.push(row);
    }
  }
  return changed;
}

function* runsOfOneZone(page: readonly StoredReading[]): Generator<StoredReading[]> {
  let run: StoredReading[] = [];
  for (const row of page) {
    if (run.length > 0 && run[0]!.zone !== row.zone) {
      yield run;
      run = [];
    }
    run.push(row);
  }
  if (run.length > 0) yield run;
}

function sameReading(a: StoredReading, b: StoredReading): boolean {
  return (
    a.value === b.value &&
    a.method === b.method &&
    a.complete === b.complete &&
    sameMix(a.mix, b.mix)
  );
}

/** Key order is not kept by every backend (PostgreSQL's jsonb sorts keys), so compare by key. */
function sameMix(a: Mix | null, b: Mix | null): boolean {
  if (a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * The source's latest report of each source, unless the target already has that one or a newer
 * one: copying an older report would make status readers see stale runs as the latest.
 */
async function copyLatestReports(from: Store, to: Store): Promise<number> {
  const [reports, held] = await Promise.all([from.latestIngestReports(), to.latestIngestReports()]);
  let copied = 0;
  for (const [source, report] of Object.entries(reports) as [SourceId, IngestReport][]) {
    const existing = held[source];
    if (existing && !isOlder(existing, report)) continue;
    await to.recordIngestReport(report);
    copied += 1;
  }
  return copied;
}

const isOlder = (a: IngestReport, b: IngestReport): boolean =>
  a.finishedAt < b.finishedAt || (a.finishedAt === b.finishedAt && a.startedAt < b.startedAt);
