import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Store } from '../storage/store.js';

const LEASE = 'ingestion';

export interface LeadershipOptions {
  readonly store: Store;
  readonly logger: Logger;
  /** Starts this instance's ingestion; what it returns stops it. */
  readonly startIngestion: () => { stop(): Promise<void> };
  /** How long a lease lasts without renewal: how soon another instance takes over a dead one. */
  readonly leaseMs?: number;
  /** How often the lease is renewed, or asked for by an instance that does not hold it. */
  readonly renewMs?: number;
}

export interface Leadership {
  /** Whether this instance runs ingestion now. */
  readonly leading: boolean;
  /** Stops ingestion if it runs here (waiting for the run in progress) and frees the lease. */
  stop(): Promise<void>;
}

/**
 * Exactly one ingester across the instances sharing a store: each instance with ingestion on
 * asks for one lease in the store; the holder ingests and renews it, the others keep asking.
 * If the holder dies, its lease expires (60 s by default) and another instance takes over, well
 * within one hourly schedule period. A holder that cannot renew (store down) stops ingesting.
 */
export function startIngestionLeadership(options: LeadershipOptions): Leadership {
  const { store, logger, startIngestion, leaseMs = 60_000, renewMs = 15_000 } = options;
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let ingestion: { stop(): Promise<void> } | undefined;
  let stopped = false;
  let turn: Promise<void> = Promise.resolve();

  const step = async () => {
    if (stopped) return;
    const held = await store.acquireLease(LEASE, holder, leaseMs).catch(() => false);
    if (held && !ingestion && !stopped) {
      logger.info({ holder }, 'this instance now runs ingestion');
      ingestion = startIngestion();
    } else if (!held && ingestion) {
      logger.warn({ holder }, 'ingestion lease lost; another instance takes over');
      const running = ingestion;
      ingestion = undefined;
      await running.stop();
    }
  };
  // Steps never overlap: each waits for the previous one.
  // A failed step (a store that cannot be reached while stopping) is logged, and the next runs.
  const schedule = () => {
    turn = turn
      .then(step)
      .catch((error: unknown) => logger.error({ err: error }, 'lease step failed'));
  };
  schedule();
  const timer = setInterval(schedule, renewMs);
  timer.unref();

  return {
    get leading() {
      return ingestion !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await turn;
      await ingestion?.stop();
      ingestion = undefined;
      await store.releaseLease(LEASE, holder).catch(() => undefined);
    },
  };
}
