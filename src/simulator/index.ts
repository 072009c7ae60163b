import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIMULATED_HEADER } from '../core/synthetic.js';
import {
  FaultBoard,
  failureReply,
  parseFaultSpec,
  type ActiveFault,
  type FaultFeed,
  type FaultSpec,
} from './faults.js';
import { jsonReply, type ReplyContext, type SourceReply } from './reply.js';
import { SIMULATED_UPSTREAMS } from './upstreams.js';
import { EUROPE_EXTRA_PROFILES, US_EXTRA_PROFILES } from './node-profiles.js';
import { EUROPE_PROFILES, US_PROFILES } from './zone-profiles.js';
import { SOURCES, type SourceId } from '../core/sources.js';

export { FAULT_KINDS, type FaultKind, type FaultSpec } from './faults.js';

/**
 * One loopback HTTP server that answers like the real upstreams, at their real paths (each
 * source's base URL is in `baseUrls`; ENTSOE_BASE_URL=<url>/api, EIA_BASE_URL=<url>/v2,
 * NESO_BASE_URL=<url>). Control endpoints under /_sim/ inject faults, move the clock and report
 * counters.
 */

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Loopback only. */
  readonly host?: '127.0.0.1';
  /** Same seed and same clock: byte-identical answers. Default 1. */
  readonly seed?: number;
  /** Epoch milliseconds; publication lags and revisions are relative to it. Default Date.now. */
  readonly now?: () => number;
  readonly faults?: readonly FaultSpec[];
  /** Per source: when set, the only key accepted (else any non-empty one). */
  readonly credentials?: Readonly<Partial<Record<SourceId, string>>>;
}

interface SimulatorState {
  readonly now: string;
  readonly seed: number;
  /** Upstream requests received per source, faulted ones included (control calls are not). */
  readonly requests: Readonly<Record<SourceId, number>>;
  /** The same per feed: actuals, and the upstream's own forecasts. */
  readonly requestsByFeed: Readonly<Record<SourceId, Readonly<Record<FaultFeed, number>>>>;
  /** Requests held unanswered now by a `slow` or `hang` fault, their connection still open. */
  readonly held: Readonly<Record<SourceId, number>>;
  readonly faults: readonly ActiveFault[];
  /** How long after an interval ends it is published, per zone (GB: as soon as it is over). */
  readonly publicationLagMinutes: Readonly<Record<string, number>>;
}

export interface Simulator {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Each source's base URL on the simulator, what its `*_BASE_URL` variable is set to. */
  readonly baseUrls: Readonly<Record<SourceId, string>>;
  readonly port: number;
  close(): Promise<void>;
  setFault(spec: FaultSpec): void;
  /** Clears one source's fault, or all of them. */
  clearFaults(source?: SourceId): void;
  /** A fixed instant (epoch ms) or a clock function. */
  setNow(now: number | (() => number)): void;
  state(): SimulatorState;
}

const CONTROL_BODY_LIMIT = 64 * 1024;
const MINUTE_MS = 60_000;

const PUBLICATION_LAG_MINUTES: Readonly<Record<string, number>> = Object.fromEntries([
  ...[...EUROPE_PROFILES, ...EUROPE_EXTRA_PROFILES, ...US_PROFILES, ...US_EXTRA_PROFILES].map(
    (profile) => [profile.zone, profile.publicationLagMs / MINUTE_MS],
  ),
  ['GB', 0],
]);

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? 1;
  let clock = options.now ?? Date.now;
  const faults = new FaultBoard();
  for (const spec of options.faults ?? []) {
    const checked = parseFaultSpec(spec);
    if (typeof checked === 'string') throw new TypeError(`invalid fault: ${checked}`);
    faults.set(checked);
  }
  const perSource = <T>(value: (source: SourceId) => T) =>
    Object.fromEntries(SOURCES.map((source) => [source, value(source)])) as Record<SourceId, T>;
  const requests = perSource(() => 0);
  const requestsByFeed = perSource((): Record<FaultFeed, number> => ({ actuals: 0, forecasts: 0 }));
  const held = perSource(() => 0);
  const hold = (source: SourceId, res: ServerResponse) => {
    held[source]++;
    res.once('close', () => held[source]--);
  };
  // Held-back replies and hanging requests, ended by close() so it never waits on them.
  const pendingTimers = new Set<NodeJS.Timeout>();
  const hanging = new Set<ServerResponse>();

  const state = (): SimulatorState => ({
    now: new Date(clock()).toISOString(),
    seed,
    requests: { ...requests },
    requestsByFeed: perSource((source) => ({ ...requestsByFeed[source] })),
    held: { ...held },
    faults: faults.list(),
    publicationLagMinutes: PUBLICATION_LAG_MINUTES,
  });
  const setNow = (now: number | (() => number)): void => {
    clock = typeof now === 'number' ? () => now : now;
  };

  const answerUpstream = (source: SourceId, url: URL, res: ServerResponse): void => {
    requests[source]++;
    const feed = SIMULATED_UPSTREAMS[source].feedOf(url);
    requestsByFeed[source][feed]++;
    const fault = faults.take(source, feed);
    const context: ReplyContext = { seed, nowMs: clock() };
    switch (fault?.fault) {
      case 'hang':
        hold(source, res);
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      case 'server-error':
      case 'rate-limited':
      case 'html-page':
        send(res, failureReply(fault));
        return;
      case 'empty':
        send(res, SIMULATED_UPSTREAMS[source].empty(context));
        return;
    }
    const reply = SIMULATED_UPSTREAMS[source].answer(url, {
      ...context,
      credential: options.credentials?.[source],
    });
    switch (fault?.fault) {
      case 'slow': {
        hold(source, res);
        const timer = setTimeout(() => {
          pendingTimers.delete(timer);
          send(res, reply);
        }, fault.delayMs ?? 3000);
        pendingTimers.add(timer);
        return;
      }
      case 'truncated':
        sendTruncated(res, reply);
        return;
      case 'malformed':
        // A complete HTTP exchange whose body stops halfway: unparseable XML or JSON.
        send(res, { ...reply, body: firstHalf(bytesOf(reply)) });
        return;
      default:
        send(res, reply);
    }
  };

  const control = async (req: IncomingMessage, url: URL): Promise<SourceReply> => {
    const route = `${req.method} ${url.pathname.replace(/\/$/, '')}`;
    if (route === 'GET /_sim/state') return jsonReply(200, state());
    if (route === 'DELETE /_sim/faults') {
      const source = url.searchParams.get('source');
      if (source !== null && !SOURCES.includes(source as SourceId)) {
        return jsonReply(400, { error: `source must be one of ${SOURCES.join(', ')}` });
      }
      faults.clear((source as SourceId | null) ?? undefined);
      return jsonReply(200, state());
    }
    if (route !== 'POST /_sim/faults' && route !== 'POST /_sim/clock') {
      return jsonReply(404, { error: `no control route ${route}` });
    }
    const body = await readJson(req);
    if (body instanceof Error) return jsonReply(400, { error: body.message });
    if (route === 'POST /_sim/faults') {
      const spec = parseFaultSpec(body);
      if (typeof spec === 'string') return jsonReply(400, { error: spec });
      faults.set(spec);
      return jsonReply(200, state());
    }
    const instant = clockInstant(body, clock());
    if (typeof instant === 'string') return jsonReply(400, { error: instant });
    setNow(instant);
    return jsonReply(200, state());
  };

  const server = createServer((req, res) => {
    // Signed, so that nothing downstream can take these answers for real data.
    res.setHeader(SIMULATED_HEADER, '1');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname.startsWith('/_sim/')) {
      control(req, url).then(
        (reply) => send(res, reply),
        () => send(res, jsonReply(500, { error: 'control request failed' })),
      );
      return;
    }
    const source = sourceOf(url.pathname);
    if (!source) {
      send(res, jsonReply(404, { error: `nothing simulated at ${url.pathname}` }));
      return;
    }
    if (req.method !== 'GET') {
      send(res, jsonReply(405, { error: 'upstream routes answer GET only' }));
      return;
    }
    try {
      answerUpstream(source, url, res);
    } catch {
      // A bug here must fail the request, not take the process (and the test run) down.
      send(res, jsonReply(500, { error: 'simulator failure' }));
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrls: perSource((source) => `${url}${SIMULATED_UPSTREAMS[source].basePath}`),
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of pendingTimers) clearTimeout(timer);
        pendingTimers.clear();
        for (const res of hanging) res.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
    setFault: (spec) => {
      const checked = parseFaultSpec(spec);
      if (typeof checked === 'string') throw new TypeError(`invalid fault: ${checked}`);
      faults.set(checked);
    },
    clearFaults: (source) => faults.clear(source),
    setNow,
    state,
  };
}

function sourceOf(pathname: string): SourceId | undefined {
  return SOURCES.find((source) => SIMULATED_UPSTREAMS[source].serves(pathname));
}

function send(res: ServerResponse, reply: SourceReply): void {
  const body = bytesOf(reply);
  res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
  res.end(body);
}

/** Announces the whole body, sends half of it, then drops the connection. */
function sendTruncated(res: ServerResponse, reply: SourceReply): void {
  const body = bytesOf(reply);
  res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
  res.write(firstHalf(body), () => res.destroy());
}

function bytesOf(reply: SourceReply): Buffer {
  return Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(reply.body);
}

function firstHalf(body: Buffer): Buffer {
  return body.subarray(0, Math.floor(body.length / 2));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > CONTROL_BODY_LIMIT) return new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return new Error('body must be JSON');
  }
}

/**
 * `{"now": "2025-10-21T12:00:00Z" | epochMs}` sets the clock, `{"advanceMs": n}` moves it on;
 * either way it then stands still until told otherwise.
 */
function clockInstant(body: unknown, current: number): number | string {
  const request = (typeof body === 'object' && body !== null ? body : {}) as Record<
    string,
    unknown
  >;
  if (typeof request.advanceMs === 'number' && Number.isFinite(request.advanceMs)) {
    return current + request.advanceMs;
  }
  const now = request.now;
  const instant = typeof now === 'string' ? Date.parse(now) : typeof now === 'number' ? now : NaN;
  return Number.isFinite(instant)
    ? instant
    : 'body must be {"now": ISO string or epoch ms} or {"advanceMs": n}';
}
