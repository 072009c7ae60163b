import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { redactUrl } from './redact.js';
import type { SourceSettings } from './sources/adapter.js';
import { UPSTREAMS } from './sources/registry.js';
import { SOURCES, type SourceId } from './core/sources.js';
import { ZONES_MODES, type ZonesMode } from './core/zone-registry.js';

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
  /**
   * Whether ingestion and backfill fetch the cross-border flows of the two flow graphs and the
   * generation of their extra nodes, which are stored but never served themselves: what the
   * consumption values are traced from (extensions §15-16). On by default (§16); FLOWS=off
   * fetches neither, and serves no consumption value.
   */
  readonly flows: boolean;
  /**
   * The zones served (extensions §16): `contract`, the 45 of the contract (the default); `all`,
   * also every ingested node of the flow graphs whose mix was complete in the last 7 days.
   */
  readonly zones: ZonesMode;
  /** Open connections in all, and from one client address (trusted proxies exempt). */
  readonly connections: {
    readonly maxConnections: number;
    readonly maxConnectionsPerAddress: number;
    /** Why the process's file limit is too low for the service, to log at start; or null. */
    readonly limitWarning: string | null;
  };
  /** Open `/v1/stream` event streams this instance holds at most, all clients together. */
  readonly streamMax: number;
  /**
   * How much lower than the server's the forecast worker's CPU priority is, as a nice value added
   * (FORECAST_NICENESS, 0-19, default 10): serving first on a small machine; 0 when the machine
   * is shared with other CPU-bound work that would otherwise starve the backtest.
   */
  readonly forecastNiceness: number;
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
  /**
   * Synthetic data from the upstream simulator is served, every response labelled, and the
   * store is marked synthetic: set by `gridco2 demo`, or DEMO=on for `serve` pointed at
   * `gridco2 simulate-upstreams`. Off, answers the simulator signs are never ingested.
   */
  readonly demo: boolean;
  /** Webhook subscriptions and deliveries (extensions §13): WEBHOOKS=on; off by default. */
  readonly webhooks: {
    readonly enabled: boolean;
    /** Host patterns callbacks may target (WEBHOOK_ALLOW); default every public host. */
    readonly allow: readonly string[];
    /** Subscriptions in all (WEBHOOK_MAX). */
    readonly max: number;
  };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads the environment; a bad value throws a ConfigError naming the variable. The default of
 * MAX_CONNECTIONS depends on how many files the process may open (`ulimit -n`), read once.
 */
export function loadConfig(
  env: Env = process.env,
  openFileLimit: number | null = processOpenFileLimit(),
): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  return Object.freeze({
    port: integer(read('PORT'), 'PORT', 8080, 0, 65535),
    host: host(read('HOST')),
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
    flows: oneOf(read('FLOWS'), 'FLOWS', ['on', 'off'], 'on') === 'on',
    zones: oneOf(read('ZONES'), 'ZONES', ZONES_MODES, 'contract'),
    connections: {
      ...maxConnections(read('MAX_CONNECTIONS'), openFileLimit),
      maxConnectionsPerAddress: integer(
        read('MAX_CONNECTIONS_PER_IP'),
        'MAX_CONNECTIONS_PER_IP',
        256,
        1,
        1e6,
      ),
    },
    streamMax: integer(read('STREAM_MAX'), 'STREAM_MAX', 1000, 1, 1e6),
    forecastNiceness: integer(read('FORECAST_NICENESS'), 'FORECAST_NICENESS', 10, 0, 19),
    metrics: oneOf(read('METRICS'), 'METRICS', ['on', 'off'], 'on') === 'on',
    metricsAddr: metricsAddress(read('METRICS_ADDR')),
    metricsToken: read('METRICS_TOKEN') || null,
    webhooks: Object.freeze({
      enabled: oneOf(read('WEBHOOKS'), 'WEBHOOKS', ['on', 'off'], 'off') === 'on',
      allow: webhookAllow(read('WEBHOOK_ALLOW')),
      max: integer(read('WEBHOOK_MAX'), 'WEBHOOK_MAX', 10_000, 1, 1e7),
    }),
    dashboard: oneOf(read('DASHBOARD'), 'DASHBOARD', ['on', 'off'], 'on') === 'on',
    demo: oneOf(read('DEMO'), 'DEMO', ['on', 'off'], 'off') === 'on',
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

/** MAX_CONNECTIONS when the process may open any number of files. */
const MAX_CONNECTIONS_DEFAULT = 10_000;
/**
 * Files kept for everything but client connections: the store (11 PostgreSQL connections, or
 * SQLite's file, -wal and -shm), Redis, upstream requests, the dashboard's files, Node's own.
 */
const FILES_RESERVED = 64;

/**
 * MAX_CONNECTIONS, by default 10,000 or what the open-file limit leaves after FILES_RESERVED:
 * past the limit the kernel refuses to accept before the connection guard can shed an idle
 * connection, and new clients are reset (issue 22). A limit too low for either is a warning.
 */
function maxConnections(
  value: string | undefined,
  openFileLimit: number | null,
): { maxConnections: number; limitWarning: string | null } {
  const fits = openFileLimit === null ? Infinity : Math.max(1, openFileLimit - FILES_RESERVED);
  const set = integer(value, 'MAX_CONNECTIONS', MAX_CONNECTIONS_DEFAULT, 1, 1e6);
  const chosen = value === undefined ? Math.min(set, fits) : set;
  if (chosen <= fits && chosen === set) return { maxConnections: chosen, limitWarning: null };
  const raise =
    'raise it (ulimit -n, systemd LimitNOFILE=, docker --ulimit nofile=) to at least ' +
    `${set + FILES_RESERVED}`;
  return {
    maxConnections: chosen,
    limitWarning:
      value === undefined
        ? `this process may open ${openFileLimit} files (ulimit -n): MAX_CONNECTIONS is ` +
          `${chosen} instead of ${MAX_CONNECTIONS_DEFAULT}, ${FILES_RESERVED} files kept for ` +
          `the store, Redis and the upstreams; ${raise}`
        : `MAX_CONNECTIONS=${set} but this process may open only ${openFileLimit} files ` +
          `(ulimit -n): past about ${fits} connections new clients are reset before idle ones ` +
          `can be closed; ${raise}, or lower MAX_CONNECTIONS`,
  };
}

let openFileLimit: number | null | undefined;

/**
 * How many files this process may open (the soft `ulimit -n`), or null when it cannot be told:
 * from /proc/self/limits on Linux, else from a shell, which inherits the limit. Read once.
 */
export function processOpenFileLimit(): number | null {
  if (openFileLimit !== undefined) return openFileLimit;
  const parse = (text: string | undefined) =>
    text === 'unlimited'
      ? Infinity
      : text !== undefined && /^\d+$/.test(text)
        ? Number(text)
        : null;
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    openFileLimit = parse(/^Max open files\s+(\S+)/m.exec(limits)?.[1]);
  } catch {
    try {
      const shell = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 5000 });
      openFileLimit = parse(shell.trim());
    } catch {
      openFileLimit = null;
    }
  }
  return openFileLimit;
}

const WEBHOOK_ALLOW_ACCEPTED =
  'a comma-separated list of host patterns: a host name, an IP address, *.example.org or *';

/** WEBHOOK_ALLOW: hosts, never URLs; a list that allows nothing is a mistake, not a setting. */
function webhookAllow(value: string | undefined): readonly string[] {
  if (value === undefined) return Object.freeze(['*']);
  const patterns = value.split(',').map((pattern) => pattern.trim());
  const isHostPattern = (pattern: string) =>
    pattern === '*' ||
    HOST_NAME.test(pattern.startsWith('*.') ? pattern.slice(2) : pattern) ||
    isIP(pattern.replace(/^\[(.*)\]$/, '$1')) !== 0;
  if (!patterns.every(isHostPattern)) {
    throw new ConfigError(`WEBHOOK_ALLOW must be ${WEBHOOK_ALLOW_ACCEPTED}, got "${value}"`);
  }
  return Object.freeze(patterns);
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

const DATABASE_URL_ACCEPTED =
  'sqlite:<path> (e.g. sqlite:data/gridco2.db) or postgres://user@host:port/database';

function databaseUrl(value: string | undefined): string {
  if (value === undefined) return 'sqlite:data/gridco2.db';
  if (/^sqlite:\s*$/.test(value)) {
    throw new ConfigError(
      `DATABASE_URL=sqlite: names no file: give its path, as in ${DATABASE_URL_ACCEPTED}`,
    );
  }
  if (/^sqlite:.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value)) return value;
  // Only the scheme is echoed: the rest may hold a password.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(value)?.[0];
  throw new ConfigError(
    `DATABASE_URL must be ${DATABASE_URL_ACCEPTED}, got ` +
      (scheme ? `a URL of scheme "${scheme}"` : 'a value without a scheme'),
  );
}

// Kept in its own module: storage redacts URLs too, and never imports the configuration.
export { redactUrl };

export const HOST_ACCEPTED =
  'an IP address of this machine (127.0.0.1, 0.0.0.0 for all IPv4 addresses, :: for all) ' +
  'or a host name that resolves to one';
// RFC 1123 host names: labels of letters, digits and inner hyphens.
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** An address or a name the server can listen on; a dotted quad must be a valid one. */
function host(value: string | undefined): string {
  if (value === undefined) return '127.0.0.1';
  const looksNumeric = /^[\d.]+$/.test(value) || value.includes(':');
  if (looksNumeric ? isIP(value) === 0 : !HOST_NAME.test(value)) {
    throw new ConfigError(`HOST must be ${HOST_ACCEPTED}, got "${value}"`);
  }
  return value;
}

function url(value: string | undefined, name: string, protocols: readonly string[]): string | null {
  if (value === undefined) return null;
  const accepted = `a URL starting with ${protocols.map((protocol) => `${protocol}//`).join(' or ')}`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    // Reported below.
  }
  if (!parsed || !protocols.includes(parsed.protocol)) {
    // Without its password: a Redis URL may carry one.
    throw new ConfigError(`${name} must be ${accepted}, got "${redactUrl(value)}"`);
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
