import { Histogram, type Metric, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS, LatencyHistogram } from './metrics.js';

describe('the request latency histogram', () => {
  it('exposes what prom-client’s Histogram exposes for the same observations', async () => {
    const ours = new LatencyHistogram();
    const oursRegistry = new Registry();
    oursRegistry.registerMetric(ours as unknown as Metric);
    const theirsRegistry = new Registry();
    const theirs = new Histogram({
      name: ours.name,
      help: ours.help,
      labelNames: ['route'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [theirsRegistry],
    });
    // On each bound, just above it, zero, and above the last bound (in +Inf only).
    const observations: [string, number][] = [
      ['/v1/intensity/latest', 0],
      ['/v1/intensity/latest', 0.0005],
      ['/v1/health', 0.00050001],
      ['/v1/intensity/latest', 0.0123],
      ['unmatched', 5],
      ['/v1/health', 7.5],
      ['/v1/intensity/latest', 0.0123],
      ['unmatched', 0.25],
    ];
    for (const [route, seconds] of observations) {
      ours.of(route).observe(seconds);
      theirs.observe({ route }, seconds);
    }
    const text = await oursRegistry.metrics();
    expect(text).toBe(await theirsRegistry.metrics());
    expect(text).toContain(
      'gridco2_http_request_duration_seconds_bucket{le="0.0005",route="/v1/intensity/latest"} 2',
    );
  });
});
