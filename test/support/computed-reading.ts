import { intensityOfMix } from '../../src/core/method.js';
import type { Mix, StoredReading } from '../../src/core/reading.js';

/** A published computed hour of `zone`, its values on both bases from `mix`, as ingestion stores it. */
export function computedReading(zone: string, ts: number, mix: Mix): StoredReading {
  const lifecycle = intensityOfMix(mix, 'lifecycle');
  return {
    zone,
    ts,
    value: lifecycle,
    method: 'computed:v1',
    complete: true,
    mix,
    lifecycle,
    direct: intensityOfMix(mix, 'direct'),
  };
}
