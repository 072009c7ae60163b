import { createHash } from 'node:crypto';
import { DefaultDeserializer, DefaultSerializer } from 'node:v8';
import type { ZoneBacktestState } from '../core/forecast/backtest-state.js';
import type { BacktestStates } from '../storage/store.js';

/**
 * The backtest's states as the store keeps them (issue 38), one per zone-basis: Node's structured
 * serialization (typed arrays as their bytes) after a SHA-256 of it, so that a state damaged in
 * storage is never resumed from: that zone-basis then starts from its first issue.
 */

const CHECKSUM_BYTES = 32;

const readHostObject = (
  DefaultDeserializer.prototype as unknown as {
    _readHostObject(this: DefaultDeserializer): unknown;
  }
)._readHostObject;

/**
 * Reads typed arrays with bytes of their own. Node's default makes each a view into the whole
 * payload: each would keep all of it alive, and a structured clone of any (WalkForward.snapshot)
 * copies all of it.
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

/** The key a zone-basis's state is stored under. */
const keyOf = (state: ZoneBacktestState): string => `${state.zone}|${state.basis}`;

/** Each state's bytes, by zone-basis. */
export function stateBytes(states: readonly ZoneBacktestState[]): BacktestStates {
  const stored = new Map<string, Uint8Array>();
  for (const state of states) {
    // Serialized after room for its checksum: the bytes are made once, not copied behind it.
    const serializer = new DefaultSerializer();
    serializer.writeRawBytes(new Uint8Array(CHECKSUM_BYTES));
    serializer.writeHeader();
    serializer.writeValue(state);
    const bytes = serializer.releaseBuffer();
    bytes.set(createHash('sha256').update(bytes.subarray(CHECKSUM_BYTES)).digest());
    stored.set(keyOf(state), bytes);
  }
  return stored;
}

/** The states by `zone|basis`; the damaged left out. */
export function statesOf(stored: BacktestStates): Map<string, ZoneBacktestState> {
  const states = new Map<string, ZoneBacktestState>();
  for (const [key, bytes] of stored) {
    const state = stateOf(bytes);
    if (state && keyOf(state) === key) states.set(key, state);
  }
  return states;
}

function stateOf(bytes: Uint8Array): ZoneBacktestState | undefined {
  if (bytes.length <= CHECKSUM_BYTES) return undefined;
  const payload = bytes.subarray(CHECKSUM_BYTES);
  const checksum = createHash('sha256').update(payload).digest();
  if (!checksum.equals(bytes.subarray(0, CHECKSUM_BYTES))) return undefined;
  try {
    return deserialize(payload) as ZoneBacktestState;
  } catch {
    return undefined;
  }
}
