import type { Logger } from 'pino';
import {
  CONTRACT_REGISTRY,
  EXTRA_ZONES,
  registryOfAll,
  type ZoneRegistry,
  type ZonesMode,
} from '../core/zone-registry.js';
import type { Store } from '../storage/store.js';
import type { AppliedChanges } from './reading-cache.js';

/** How often `ZONES=all` looks again without being told of new data: to let silent nodes go. */
const RESOLVE_EVERY_MS = 10 * 60_000;

const EXTRA_CODES: ReadonlySet<string> = new Set(EXTRA_ZONES.map((zone) => zone.code));

/**
 * The zones this server serves now (extensions §16), as one registry every reader asks: the 45
 * of the contract, fixed, by default; with `ZONES=all`, resolved from the store and again
 * whenever it may have changed (`resolve()`: after an ingestion pass, when the reading cache
 * applies a change of an extra node's series (`resolveFor`), and every RESOLVE_EVERY_MS), so that
 * an extra node is served once its first complete mix is stored and leaves 7 days after its last.
 */
export class ServedZones {
  private registry: ZoneRegistry = CONTRACT_REGISTRY;
  private readonly listeners: (() => void)[] = [];
  private resolving: Promise<void> | undefined;
  /** A resolve asked while one runs: the data may have changed after it read. */
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  /** Stopped: the store is closing, nothing reads it any more. */
  private stopped = false;

  constructor(
    readonly mode: ZonesMode,
    private readonly store?: Pick<Store, 'latestPerZone'>,
    private readonly clock: () => number = Date.now,
    private readonly logger?: Logger,
  ) {}

  /** The default: the 45 zones of the contract, never resolved. */
  static readonly CONTRACT = new ServedZones('contract');

  /** The zones served now. */
  get current(): ZoneRegistry {
    return this.registry;
  }

  /** Called after every change of the served zones (bodies listing them are stale). */
  onChange(listener: () => void): void {
    // The 45 of the contract never change: nothing to tell, and nothing kept.
    if (this.mode === 'all') this.listeners.push(listener);
  }

  /**
   * Reads again which extra nodes have a complete mix in the last 7 days (with `ZONES=all`; a
   * no-op otherwise). Never rejects: an unreadable store keeps the zones served until then.
   */
  resolve(): Promise<void> {
    if (this.mode !== 'all' || !this.store || this.stopped) return Promise.resolve();
    if (this.resolving) {
      this.again = true;
      return this.resolving;
    }
    this.resolving = (async () => {
      do {
        this.again = false;
        await this.resolveOnce();
      } while (this.again && !this.stopped);
    })().finally(() => (this.resolving = undefined));
    return this.resolving;
  }

  /**
   * Resolves again when what the reading cache applied may change the zones served: a change of
   * an extra node's series, or everything reloaded. The 45's own changes, most of them, do not.
   */
  resolveFor(applied: AppliedChanges): Promise<void> {
    const mayChange =
      applied.changes === undefined ||
      applied.changes.some((change) => EXTRA_CODES.has(change.zone));
    return mayChange ? this.resolve() : Promise.resolve();
  }

  /** Resolves now and every RESOLVE_EVERY_MS until `stop()`. */
  async start(): Promise<void> {
    await this.resolve();
    if (this.mode !== 'all' || this.timer) return;
    this.timer = setInterval(() => void this.resolve(), RESOLVE_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.resolving;
  }

  private async resolveOnce(): Promise<void> {
    const now = Math.floor(this.clock() / 1000);
    let completeAt: Map<string, number>;
    try {
      // One read for every node: the newest complete mix of each (its newest published reading).
      const newest = await this.store!.latestPerZone();
      completeAt = new Map(
        newest.flatMap((reading) =>
          EXTRA_CODES.has(reading.zone) ? [[reading.zone, reading.ts] as const] : [],
        ),
      );
    } catch (error) {
      this.logger?.warn({ err: error }, 'served zones not resolved; keeping the current ones');
      return;
    }
    const resolved = registryOfAll(completeAt, now);
    if (resolved.sameAs(this.registry)) return;
    this.registry = resolved;
    this.logger?.info({ zones: resolved.zones.length }, 'served zones changed');
    for (const listener of this.listeners) listener();
  }
}
