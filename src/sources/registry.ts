import type { UpstreamDefinition } from './adapter.js';
import { EIA_UPSTREAM } from './eia/upstream.js';
import { ENTSOE_UPSTREAM } from './entsoe/upstream.js';
import { NESO_UPSTREAM } from './neso/upstream.js';
import type { SourceId } from '../core/sources.js';

/**
 * The one registry of upstreams: each source's settings (its environment variables) and the
 * factory of its adapter, keyed by the source ids of src/core/zones.ts, where the facts the API
 * serves (zones, code tables, staleness) live because the core stays free of I/O. Configuration
 * (src/config.ts), ingestion (src/ingest/sources.ts), the demo and the simulator's command read
 * it; nothing switches on a source id. The type demands an entry for every source of the core.
 */
export const UPSTREAMS: { readonly [S in SourceId]: UpstreamDefinition } = {
  'europe-tso': ENTSOE_UPSTREAM,
  'us-agency': EIA_UPSTREAM,
  'uk-operator': NESO_UPSTREAM,
};
