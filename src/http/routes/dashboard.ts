import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { API_ERRORS } from '../contract/errors.js';
import { matchesIfNoneMatch } from '../contract/headers.js';
import { chooseEncoding } from '../transport/negotiate.js';

/**
 * `GET /`: the dashboard (web/, built by Vite into dist/web), served by the API's own process
 * (extensions §10). Its files are read once at start: one route per file, so an unknown asset is
 * the router's JSON 404 and no request path ever reaches the file system (no traversal to
 * guard). Each file is served as built: brotli or gzip as the client accepts them, made at build
 * time, never at request time. The page itself reads only the public API.
 */

/** Where `npm run build` puts the page: <repository>/dist/web, from src/http/routes or dist/http/routes alike. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../../dist/web', import.meta.url));

const CACHE = {
  // The page names the hashed assets: it must be revalidated (cheaply, by ETag) on every load.
  page: 'no-cache',
  // A hashed name never changes content.
  asset: 'public, max-age=31536000, immutable',
} as const;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Scripts and data from this origin only; inline style attributes carry the colour scale. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-content-type-options': 'nosniff',
} as const;

type Encoding = 'br' | 'gzip' | 'identity';

interface Variant {
  readonly body: Buffer;
  readonly etag: string;
}

interface StaticFile {
  readonly type: string;
  readonly variants: Readonly<Partial<Record<Encoding, Variant>>>;
}

interface Site {
  readonly page: StaticFile;
  /** By file name, as under /assets/. */
  readonly assets: ReadonlyMap<string, StaticFile>;
}

function variant(body: Buffer, encoding: Encoding): Variant {
  const hash = createHash('sha1').update(body).digest('base64url').slice(0, 20);
  return { body, etag: `"${hash}${encoding === 'identity' ? '' : `-${encoding}`}"` };
}

function readFile(path: string): StaticFile {
  const read = (suffix: string, encoding: Encoding) =>
    existsSync(path + suffix) ? variant(readFileSync(path + suffix), encoding) : undefined;
  return {
    type: TYPES[extname(path)] ?? 'application/octet-stream',
    variants: { identity: read('', 'identity'), br: read('.br', 'br'), gzip: read('.gz', 'gzip') },
  };
}

/** The built page and its assets, or null when `root` holds no built page. */
function loadSite(root: string): Site | null {
  const page = join(root, 'index.html');
  if (!existsSync(page)) return null;
  const folder = join(root, 'assets');
  const names = existsSync(folder)
    ? readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile() && !/\.(br|gz)$/.test(entry.name))
        .map((entry) => entry.name)
    : [];
  return {
    page: readFile(page),
    assets: new Map(names.map((name) => [name, readFile(join(folder, name))])),
  };
}

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  file: StaticFile,
  headers: Readonly<Record<string, string>>,
) {
  const built = (['br', 'gzip'] as const).filter((coding) => file.variants[coding]);
  const encoding = chooseEncoding(request.headers['accept-encoding'], built) ?? 'identity';
  const chosen = file.variants[encoding] ?? file.variants.identity!;
  reply.headers({ ...headers, vary: 'accept-encoding', etag: chosen.etag });
  if (matchesIfNoneMatch(request.headers['if-none-match'], chosen.etag)) {
    return reply.code(304).send();
  }
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(chosen.body);
}

/**
 * Registers `/` and one `/assets/<name>` route per built file. Not in the OpenAPI document: the
 * page is not part of the API. When the page was not built, `/` says so in a JSON 404 and the
 * log says how to build it.
 */
export function registerDashboard(
  app: FastifyInstance,
  options: { readonly root: string; readonly logger?: Logger | undefined },
): void {
  const site = loadSite(options.root);
  const route = (cacheControl: string, contentType: string) => ({
    schema: { hide: true },
    config: { cacheControl, etag: true, contentType },
  });
  if (!site) {
    options.logger?.warn(
      { webRoot: options.root },
      'dashboard not built: GET / answers 404; run `npm run build` (or set DASHBOARD=off)',
    );
    app.get('/', { schema: { hide: true } }, async () => {
      throw API_ERRORS.dashboardNotBuilt();
    });
    return;
  }
  app.get('/', route(CACHE.page, site.page.type), (request, reply) =>
    send(request, reply, site.page, PAGE_HEADERS),
  );
  for (const [name, file] of site.assets) {
    app.get(`/assets/${name}`, route(CACHE.asset, file.type), (request, reply) =>
      send(request, reply, file, { 'x-content-type-options': 'nosniff' }),
    );
  }
}
