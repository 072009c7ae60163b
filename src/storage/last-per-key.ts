/**
 * One item per key, the later one winning as with successive upserts, in key order: PostgreSQL
 * refuses to update a row twice in one statement, and concurrent writers that lock rows in the
 * same order cannot deadlock.
 */
export function lastPerKey<T>(items: readonly T[], compare: (a: T, b: T) => number): T[] {
  const sorted = [...items].sort(compare); // stable: equal keys keep their order
  return sorted.filter((item, i) => {
    const next = sorted[i + 1];
    return next === undefined || compare(item, next) !== 0;
  });
}
