import type { Reads } from '../read/reads.js';
import type { ReadingChange } from '../read/read-model.js';

/** Changes read from the store per query when catching up. */
const PAGE_ROWS = 5000;

/**
 * Every change after data version `since`, in pages that each end on a whole write, with the
 * version up to which the page is complete.
 */
export async function* changePages(
  reads: Reads,
  since: number,
  pageRows = PAGE_ROWS,
): AsyncGenerator<{ readonly changes: readonly ReadingChange[]; readonly upTo: number }> {
  let cursor = since;
  let limit = pageRows;
  for (;;) {
    const page = await reads.changesSince(cursor, limit);
    const rows = page.changes;
    if (rows.length < limit || page.complete) {
      yield { changes: rows, upTo: page.version };
      return;
    }
    // The page may end inside a write: keep its last write for the next page.
    const lastVersion = rows.at(-1)!.version;
    const end = rows.findIndex((row) => row.version === lastVersion);
    if (end === 0) {
      // One write larger than a page: read it whole.
      limit *= 2;
      continue;
    }
    yield { changes: rows.slice(0, end), upTo: lastVersion - 1 };
    cursor = lastVersion - 1;
    limit = pageRows;
  }
}
