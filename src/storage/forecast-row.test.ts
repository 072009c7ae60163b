import { describe, expect, it } from 'vitest';
import { forecastColumns } from './forecast-row.js';

describe('forecast rows as columns', () => {
  it('keeps every row, in order, past the columns first size', () => {
    const rows = Array.from({ length: 3000 }, (_, k) => [k * 900, k * 900 - 3600, k / 7] as const);
    const columns = forecastColumns(rows);
    expect(columns.ts.length).toBe(3000);
    expect(Array.from(columns.ts)).toEqual(rows.map(([ts]) => ts));
    expect(Array.from(columns.issuedAt)).toEqual(rows.map(([, issuedAt]) => issuedAt));
    expect(Array.from(columns.value)).toEqual(rows.map(([, , value]) => value));
    expect(forecastColumns([]).ts.length).toBe(0);
  });
});
