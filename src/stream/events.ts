import type { Basis } from '../core/factors.js';
import { formatTs } from '../core/time.js';
import { round1 } from '../core/units.js';
import type { ReadingChange, StoreKey } from '../read/read-model.js';
import { publishedReading } from '../read/reading-cache.js';

/**
 * The text of `reading` events (extensions §7): built once per batch of changes and basis, and
 * cut into chunks for each client by what it has had.
 */

/** Event text written at once. */
const CHUNK_CHARS = 16 * 1024;

type BasisKey = 'default' | Basis;

/** What a client has had: every change up to `cursor`, of its zones (undefined: every zone). */
export interface EventReceiver {
  readonly cursor: number;
  readonly zones: ReadonlySet<string> | undefined;
}

/** One reading event, written as the client needs it (with or without `id`). */
export interface ReadingEvent {
  readonly zone: string;
  readonly version: number;
  readonly data: string;
}

/** The events of a set of changes on each basis, built once for every client that needs them. */
export class PreparedEvents {
  private readonly built = new Map<BasisKey, readonly ReadingEvent[]>();

  /** `served`: whether a stored zone is served now (the flow graphs' other nodes are stored too). */
  constructor(
    private readonly changes: readonly ReadingChange[],
    private readonly served: (zone: string) => boolean,
  ) {}

  on(basis: Basis | undefined): readonly ReadingEvent[] {
    const key: BasisKey = basis ?? 'default';
    let events = this.built.get(key);
    if (!events) {
      const list: ReadingEvent[] = [];
      for (const change of this.changes) {
        const reading = this.served(change.zone) && publishedReading(change, basis);
        if (!reading) continue;
        list.push({
          zone: change.zone,
          version: change.version,
          data:
            `{"zone":"${change.zone}","ts":"${formatTs(reading.ts)}",` +
            `"gco2eq_kwh":${round1(reading.value)},"method":"${reading.method}"}`,
        });
      }
      this.built.set(key, (events = list));
    }
    return events;
  }
}

/** Event text of consecutive events, the last one at `next - 1` in the events it was cut from. */
export interface Chunk {
  readonly text: string;
  /** Every write up to this version has been sent whole once this chunk is. */
  readonly upTo: number;
  /** Where the events after this chunk start. */
  readonly next: number;
  /** The version of its last event: above `upTo` when the chunk ends inside a write. */
  readonly last: number;
}

/**
 * The events of `batch`, from its index `from`, that `client` has not had (above its cursor, in
 * its zones), as chunks of about CHUNK_CHARS. The last event of each write carries the `id`, so
 * the id a client keeps is that of a write it got whole; a write larger than a chunk is cut
 * between chunks, and `next` says where its rest starts, so that it is sent once, never again.
 * A write past the batch's `upTo` has its rest in the next batch: none of its events has an id.
 */
export function* eventChunks(client: EventReceiver, batch: BatchRest): Generator<Chunk> {
  const { events } = batch;
  let text = '';
  let upTo = client.cursor;
  let last = client.cursor;
  const mine = (event: ReadingEvent) =>
    event.version > client.cursor && (!client.zones || client.zones.has(event.zone));
  for (let i = batch.from; i < events.length; i++) {
    const event = events[i]!;
    if (!mine(event)) continue;
    let next = i + 1;
    while (next < events.length && !mine(events[next]!)) next++;
    const writeGoesOn =
      event.version > batch.upTo ||
      (next < events.length && events[next]!.version === event.version);
    if (writeGoesOn) {
      text += `event: reading\ndata: ${event.data}\n\n`;
    } else {
      text += `event: reading\nid: ${event.version}\ndata: ${event.data}\n\n`;
      upTo = event.version;
    }
    last = event.version;
    if (text.length >= CHUNK_CHARS) {
      yield { text, upTo, next: i + 1, last };
      text = '';
    }
  }
  if (text !== '') yield { text, upTo, next: events.length, last };
}

/**
 * The events of a batch a client has still to be sent, from `from`: complete up to `upTo` and,
 * when `within` is set, the first part of the next write, up to that key (ChangePage).
 */
export interface BatchRest {
  readonly events: readonly ReadingEvent[];
  readonly from: number;
  readonly upTo: number;
  readonly within?: StoreKey;
}

/** A bare `id` line (no event): moves the client's resume point on past writes not for it. */
export const idLine = (version: number) => `id: ${version}\n\n`;
