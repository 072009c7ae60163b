import { isIP } from 'node:net';
import { SOURCES, type SourceId } from './core/zones.js';
import type { SourceSettings } from './sources/adapter.js';
import { UPSTREAMS } from './sources/registry.js';

/** The service's whole configuration, parsed once from the environment and then frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly rateLimitPerMinute: number;
  /** Proxy addresses or CIDRs whose X-Forwarded-For is believed; empty: none. */
  readonly trustProxy: readonly string[];
  readonly logLevel: LogLevel;
  readonly redisUrl: string | null;
  /** Prefix of every Redis key this deployment uses, so deployments can share one Redis. */
  readonly redisPrefix: string;
  /** Whether this instance runs the hourly ingestion scheduler. */
  readonly ingest: boolean;
  /** Time between two ingestion runs of a source. */
  readonly ingestIntervalSeconds: number;
  /** How long the ingestion lease lasts unrenewed: the takeover time when an ingester dies. */
  readonly ingestLeaseSeconds: number;
  /** Each upstream's base URL and key, from the variables its registry entry names. */
  readonly sources: Readonly<Record<SourceId, SourceSettings>>;
  /** Open connections in all, and from one client address (trusted proxies exempt). */
  readonly connections: {
    readonly maxConnections: number;
    readonly maxConnectionsPerAddress: number;
  };
  /** Open `/v1/stream` event streams this instance holds at most, all clients together. */
  readonly streamMax: number;
  /** Whether `GET /metrics` is served and requests are counted for it (METRICS=off: neither). */
  readonly metrics: boolean;
  /**
   * Where `GET /metrics` is served (METRICS_ADDR, extensions §8): a listener of its own at
   * `host:port` (default 127.0.0.1:9464), or `public`: the service's port.
   */
  readonly metricsAddr: { readonly host: string; readonly port: number } | 'public';
  /** A bearer token that opens `GET /metrics` on the public listener (METRICS_TOKEN). */
  readonly metricsToken: string | null;
  /** Whether `GET /` serves the dashboard and `/assets/` its files (DASHBOARD=off: neither). */
  readonly dashboard: boolean;
  /** Synthetic data from the simulator: set only by `gridco2 demo`, never by the environment. */
  readonly demo: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads the environment; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  return Object.freeze({
    port: integer(read('PORT'), 'PORT', 8080, 0, 65535),
    host: read('HOST') ?? '127.0.0.1',
    databaseUrl: databaseUrl(read('DATABASE_URL')),
    rateLimitPerMinute: integer(read('RATE_LIMIT_PER_MINUTE'), 'RATE_LIMIT_PER_MINUTE', 60, 1, 1e9),
    trustProxy: trustProxy(read('TRUST_PROXY')),
    logLevel: oneOf(read('LOG_LEVEL'), 'LOG_LEVEL', LOG_LEVELS, 'info'),
    redisUrl: url(read('REDIS_URL'), 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: read('REDIS_PREFIX') ?? 'gridco2:',
    ingest: oneOf(read('INGEST'), 'INGEST', ['on', 'off'], 'on') === 'on',
    ingestIntervalSeconds: integer(
      read('INGEST_INTERVAL_SECONDS'),
      'INGEST_INTERVAL_SECONDS',
      3600,
      10,
      86400,
    ),
    ingestLeaseSeconds: integer(read('INGEST_LEASE_SECONDS'), 'INGEST_LEASE_SECONDS', 60, 2, 3600),
    sources: Object.freeze(
      Object.fromEntries(
        SOURCES.map((source): [SourceId, SourceSettings] => {
          const { baseUrl: url, credential } = UPSTREAMS[source].settings;
          return [
            source,
            Object.freeze({
              baseUrl: baseUrl(read(url.variable), url.variable, url.default),
              credential: credential ? (read(credential.variable) ?? null) : null,
            }),
          ];
        }),
      ) as Record<SourceId, SourceSettings>,
    ),
    connections: {
      maxConnections: integer(read('MAX_CONNECTIONS'), 'MAX_CONNECTIONS', 10_000, 1, 1e6),
      maxConnectionsPerAddress: integer(
        read('MAX_CONNECTIONS_PER_IP'),
        'MAX_CONNECTIONS_PER_IP',
        256,
        1,
        1e6,
      ),
    },
    streamMax: integer(read('STREAM_MAX'), 'STREAM_MAX', 1000, 1, 1e6),
    metrics: oneOf(read('METRICS'), 'METRICS', ['on', 'off'], 'on') === 'on',
    metricsAddr: metricsAddress(read('METRICS_ADDR')),
    metricsToken: read('METRICS_TOKEN') || null,
    dashboard: oneOf(read('DASHBOARD'), 'DASHBOARD', ['on', 'off'], 'on') === 'on',
    demo: false,
  });
}

function integer(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}

function oneOf<T extends string>(
  value: string | undefined,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  const lower = value.toLowerCase();
  const match = allowed.find((candidate) => candidate === lower);
  if (!match) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return match;
}

function databaseUrl(value: string | undefined): string {
  if (value === undefined) return 'sqlite:data/gridco2.db';
  if (/^sqlite:.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value)) return value;
  throw new ConfigError(
    'DATABASE_URL must be sqlite:<path> or postgres://user@host:port/database, got ' +
      `"${value.split(':')[0]}:..."`,
  );
}

/**
 * A database or Redis URL fit for messages and logs: the password, in the user part or in a
 * `password=` parameter (node-postgres reads both), replaced by `***`; the rest kept so that the
 * reader can tell which server and database were meant.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
    .replace(/([?&](?:ssl)?password=)[^&#]*/gi, '$1***');
}

function url(value: string | undefined, name: string, protocols: readonly string[]): string | null {
  if (value === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  }
  return value;
}

function baseUrl(value: string | undefined, name: string, fallback: string): string {
  const checked = url(value, name, ['http:', 'https:']) ?? fallback;
  return checked.replace(/\/+$/, '');
}

function trustProxy(value: string | undefined): string[] {
  if (value === undefined || value.toLowerCase() === 'off') return [];
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || !prefixOk) {
      throw new ConfigError(
        `TRUST_PROXY must be off or a comma-separated list of IP addresses or CIDRs, got "${entry}"`,
      );
    }
  }
  return entries;
}

/** `public`, or `host:port` (an IPv6 host in brackets); unset: 127.0.0.1:9464. */
function metricsAddress(value: string | undefined): { host: string; port: number } | 'public' {
  const name = 'METRICS_ADDR';
  if (value === undefined || value === '') return { host: '127.0.0.1', port: 9464 };
  if (value.toLowerCase() === 'public') return 'public';
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new ConfigError(
      `${name} must be host:port, e.g. 127.0.0.1:9464, or public, got "${value}"`,
    );
  }
  return { host: match[1] ?? match[2]!, port };
}
