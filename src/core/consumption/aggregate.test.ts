import { describe, expect, it } from 'vitest';
import { aggregateConsumption } from './aggregate.js';
import { type HourGraph, traceHour } from './trace-hour.js';

const TS = Date.UTC(2026, 5, 1, 12) / 1000;

// Two balancing authorities: P (coal 100) exports 50 to Q (wind 100); Q exports 30 to Canada.
const graph: HourGraph = {
  ts: TS,
  nodes: [
    { id: 'P', generation: { coal: 100 }, complete: true },
    { id: 'Q', generation: { 'wind-onshore': 100 }, complete: true },
    { id: 'R', generation: { gas: 10 }, complete: false },
  ],
  flows: [
    { from: 'P', to: 'Q', mwh: 50, estimated: false },
    { from: 'Q', to: 'IESO', mwh: 30, estimated: false },
  ],
  estimates: new Map(),
};
const trace = traceHour(graph);

describe('aggregateConsumption (US48)', () => {
  it('is the mean of the members values weighed by what each consumed', () => {
    const us = aggregateConsumption(trace, ['P', 'Q'])!;
    // P consumes 50 at 820; Q consumes 150 - 30 = 120 at (50 x 820 + 100 x 11) / 150.
    const q = (50 * 820 + 100 * 11) / 150;
    expect(us.consumptionMwh).toBe(170);
    expect(us.intensity.lifecycle).toBeCloseTo((50 * 820 + 120 * q) / 170, 10);
    expect(us.intensity.direct).toBeCloseTo((50 * 760 + 120 * ((50 * 760) / 150)) / 170, 10);
    // Consumed by category: P 50 coal; Q 120 x (1/3 coal, 2/3 wind) = 40 coal, 80 wind.
    expect(us.consumption.coal).toBeCloseTo(90, 10);
    expect(us.consumption['wind-onshore']).toBeCloseTo(80, 10);
    expect(us.renewablePct).toBeCloseTo(800 / 17, 10);
    expect(us.lowCarbonPct).toBeCloseTo(800 / 17, 10);
    expect(us.estimatedPct).toBe(0);
  });

  it('lists only the flows and estimated borders with nodes outside the members', () => {
    const estimated = traceHour({
      ...graph,
      flows: [
        ...graph.flows,
        { from: 'MEX', to: 'P', mwh: 5, estimated: true },
        { from: 'IESO', to: 'P', mwh: 2, estimated: false },
      ],
    });
    const us = aggregateConsumption(estimated, ['P', 'Q'])!;
    expect(us.imports).toEqual({ MEX: 5, IESO: 2 });
    expect(us.exports).toEqual({ IESO: 30 });
    expect(us.estimatedBorders).toEqual(['MEX']);
    expect(aggregateConsumption(estimated, ['P'])!.exports).toEqual({ Q: 50 });
  });

  it('is not published unless every member is solved', () => {
    expect(aggregateConsumption(trace, ['P', 'Q', 'R'])).toBeUndefined();
    expect(aggregateConsumption(trace, ['P', 'S'])).toBeUndefined();
    expect(aggregateConsumption(trace, [])).toBeUndefined();
  });
});
