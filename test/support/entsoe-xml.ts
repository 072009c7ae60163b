/** Pieces of small inline ENTSO-E documents for the parsers' tests (src/sources/entsoe/). */

/** One Period: its interval, resolution and Points (position, quantity as it would be written). */
export interface PeriodSpec {
  readonly start: string;
  readonly end: string;
  readonly resolution: string;
  readonly points: ReadonlyArray<readonly [position: number | string, quantity: number | string]>;
}

/** The `<Period>` elements of a TimeSeries. */
export function periodsXml(periods: readonly PeriodSpec[]): string {
  return periods
    .map(
      ({ start, end, resolution, points }) => `<Period>
      <timeInterval><start>${start}</start><end>${end}</end></timeInterval>
      <resolution>${resolution}</resolution>
      ${points
        .map(
          ([position, quantity]) =>
            `<Point><position>${position}</position><quantity>${quantity}</quantity></Point>`,
        )
        .join('\n')}
    </Period>`,
    )
    .join('\n');
}
