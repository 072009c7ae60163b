import { createHash } from 'node:crypto';
import { DefaultDeserializer, serialize } from 'node:v8';
import type { ZoneBacktestState } from '../core/forecast/backtest-state.js';

/**
 * The backtest's states as the store keeps them (issue 38): Node's structured serialization (typed
 * arrays as their bytes) after a SHA-256 of it, so that a state damaged in storage is never
 * resumed from: the run then starts from every zone's first issue.
 */

const CHECKSUM_BYTES = 32;

const readHostObject = (
  DefaultDeserializer.prototype as unknown as {
    _readHostObject(this: DefaultDeserializer): unknown;
  }
)._readHostObject;

/**
 * Reads typed arrays with bytes of their own. Node's default makes each a view into the whole
 * payload (every state's): each would keep all of it alive, and a structured clone of any
 * (WalkForward.snapshot) copies all of it, a day's rerun then copying the whole state per zone.
 */
class OwnBytesDeserializer extends DefaultDeserializer {
  _readHostObject(): unknown {
    const value = readHostObject.call(this);
    if (!ArrayBuffer.isView(value)) return value;
    const { byteOffset, byteLength } = value;
    const Kind = value.constructor as new (buffer: ArrayBufferLike) => ArrayBufferView;
    return new Kind(value.buffer.slice(byteOffset, byteOffset + byteLength));
  }
}

function deserialize(payload: Uint8Array): unknown {
  const deserializer = new OwnBytesDeserializer(payload);
  deserializer.readHeader();
  return deserializer.readValue();
}

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
