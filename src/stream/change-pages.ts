import type { Reads } from '../read/reads.js';
import type { ReadingChange, StoreKey } from '../read/read-model.js';

/** Changes read from the store per query when catching up. */
const PAGE_ROWS = 5000;

/**
 * A follower's place in the changes: every write up to data version `version` whole and, when
 * `within` is set, the rows of the next write (`version + 1`) up to that key: a write larger
 * than a page is read a page at a time.
 */
export interface ChangePosition {
  readonly version: number;
  readonly within?: StoreKey;
}

export interface ChangePage {
  /** In (version, zone, ts) order. */
  readonly changes: readonly ReadingChange[];
  /** Every write up to this version is complete once the page is read. */
  readonly upTo: number;
  /**
   * Set when the page ends inside write `upTo + 1`: its last row, after which the next page
   * starts. The page's changes of that write are the first part of it, not all of it.
   */
  readonly within?: StoreKey;
}

/**
 * Every change after `from`, in pages of at most `pageRows` changes. A page ends on a whole
 * write, unless one write fills it: then it ends inside that write, and the next page starts
 * after its last row.
 */
export async function* changePages(
  reads: Reads,
  from: ChangePosition,
  pageRows = PAGE_ROWS,
): AsyncGenerator<ChangePage> {
  let position = from;
  for (;;) {
    // One row more than a page: whether the page's last write goes on past it.
    const page = await reads.changesSince(position.version, pageRows + 1, position.within);
    const rows = page.changes;
    if (rows.length <= pageRows) {
      yield { changes: rows, upTo: page.version };
      return;
    }
    const last = rows[pageRows - 1]!;
    if (rows[pageRows]!.version !== last.version) {
      position = { version: last.version };
      yield { changes: rows.slice(0, pageRows), upTo: last.version };
      continue;
    }
    const end = rows.findIndex((row) => row.version === last.version);
    if (end > 0) {
      // Keep the page's last write, which goes on past it, for the next page.
      position = { version: last.version - 1 };
      yield { changes: rows.slice(0, end), upTo: position.version };
    } else {
      // One write fills the page: read it a page at a time (one query for all of it held the
      // event loop for as long as it took).
      const within = { zone: last.zone, ts: last.ts };
      position = { version: last.version - 1, within };
      yield { changes: rows.slice(0, pageRows), upTo: position.version, within };
    }
  }
}
