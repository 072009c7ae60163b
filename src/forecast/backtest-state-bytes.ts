import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import type { ZoneBacktestState } from '../core/forecast/backtest-state.js';

/**
 * The backtest's states as the store keeps them (issue 38): Node's structured serialization (typed
 * arrays as their bytes) after a SHA-256 of it, so that a state damaged in storage is never
 * resumed from: the run then starts from every zone's first issue.
 */

const CHECKSUM_BYTES = 32;

export function stateBytes(states: readonly ZoneBacktestState[]): Uint8Array {
  const payload = serialize(states);
  const checksum = createHash('sha256').update(payload).digest();
  const bytes = new Uint8Array(CHECKSUM_BYTES + payload.length);
  bytes.set(checksum);
  bytes.set(payload, CHECKSUM_BYTES);
  return bytes;
}

/** The states by `zone|basis`; none when there are no bytes or they are damaged. */
export function statesOf(bytes: Uint8Array | null): Map<string, ZoneBacktestState> {
  const states = new Map<string, ZoneBacktestState>();
  if (!bytes || bytes.length <= CHECKSUM_BYTES) return states;
  const payload = bytes.subarray(CHECKSUM_BYTES);
  const checksum = createHash('sha256').update(payload).digest();
  if (!checksum.equals(bytes.subarray(0, CHECKSUM_BYTES))) return states;
  let decoded: unknown;
  try {
    decoded = deserialize(payload);
  } catch {
    return states;
  }
  if (!Array.isArray(decoded)) return states;
  for (const state of decoded as ZoneBacktestState[])
    states.set(`${state.zone}|${state.basis}`, state);
  return states;
}
