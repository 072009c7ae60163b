import type { Method } from '../../../core/reading.js';
import type { SourceId } from '../../../core/sources.js';

/**
 * The names of the hosted service gridco2 replaces ("gridcarbon"), for `/compat/gridcarbon/v1`
 * (extensions §14, docs/compat.md): its clients compare `source` and `method` against these
 * literals, so the same bodies are served with them. Pure text transforms over what /v1 sends;
 * nothing else of a body changes.
 */

const GRIDCARBON_PREFIX = '/compat/gridcarbon';

const SOURCE_NAMES: Readonly<Record<SourceId, string>> = {
  'europe-tso': 'entsoe',
  'us-agency': 'eia',
  'uk-operator': 'uk-neso',
};

const METHOD_NAMES: Readonly<Partial<Record<Method, string>>> = {
  'upstream:uk-operator:actual': 'upstream:uk-neso:actual',
  'upstream:uk-operator:forecast': 'upstream:uk-neso:forecast',
};

/** Our name -> the replaced service's name, for sources and methods (`computed:*` unchanged). */
const OUTGOING: ReadonlyMap<string, string> = new Map([
  ...Object.entries(SOURCE_NAMES),
  ...Object.entries(METHOD_NAMES),
]);

/** The replaced service's name -> ours, for what clients send. */
const INCOMING: ReadonlyMap<string, string> = new Map(
  [...OUTGOING].map(([ours, theirs]) => [theirs, ours]),
);

/** A `/v1` path named in text (`GET /v1/zones`, `see /v1 for`), not `/v10` nor `x/v1`. */
const V1_PATH = /(?<![\w./-])\/v1(?![\w-])/g;

/** The text of a JSON string (or a CSV cell) as served under the prefix. */
function renameValue(value: string): string {
  const renamed = OUTGOING.get(value);
  if (renamed !== undefined) return renamed;
  return value.includes('/v1') ? value.replace(V1_PATH, `${GRIDCARBON_PREFIX}/v1`) : value;
}

/** Whether `text` may hold anything renameValue changes: most bodies do not, and stay as sent. */
const MAY_RENAME = /\/v1|europe-tso|us-agency|uk-operator/;

/**
 * A JSON string token that is exactly one of our names. In valid JSON a quote preceded by a
 * backslash is inside a string, and any other quote before a letter opens a token (a closing
 * quote is followed by `:`, `,`, `}`, `]` or space), so these are exactly the names that are
 * whole values or keys. (The names hold only letters, `-` and `:`: nothing to escape.)
 */
const NAME_TOKEN = new RegExp(`(?<!\\\\)"(${[...OUTGOING.keys()].join('|')})"`, 'g');

/**
 * JSON text (a document, or complete lines of one: server-sent events, NDJSON) with every string
 * token that is exactly a source or method name renamed, object keys included (the factor
 * mappings are keyed by source), and `/v1` paths (which JSON holds only inside strings) moved
 * under the prefix. Every other byte is copied as it is.
 */
export function renameJson(text: string): string {
  if (!MAY_RENAME.test(text)) return text;
  return text
    .replace(NAME_TOKEN, (_token, name: string) => `"${OUTGOING.get(name)!}"`)
    .replace(V1_PATH, `${GRIDCARBON_PREFIX}/v1`);
}

/** CSV lines (the export's): a cell that is exactly a source or method name is renamed. */
export function renameCsv(text: string): string {
  if (!MAY_RENAME.test(text)) return text;
  return text
    .split('\n')
    .map((line) => (MAY_RENAME.test(line) ? line.split(',').map(renameValue).join(',') : line))
    .join('\n');
}

/** A Link or Location header: its `/v1` URLs under the prefix, query values in the old names. */
export function renameLinkHeader(value: string): string {
  return value.replace(/<([^>]*)>/g, (_match, target: string) => `<${renameTarget(target)}>`);
}

function renameTarget(target: string): string {
  const mark = target.indexOf('?');
  const path = mark < 0 ? target : target.slice(0, mark);
  const prefixed = path.startsWith('/v1') ? `${GRIDCARBON_PREFIX}${path}` : path;
  if (mark < 0) return prefixed;
  return `${prefixed}?${renameQueryValues(target.slice(mark + 1), OUTGOING)}`;
}

/** A query string with every value that is exactly a key of `names` replaced by its entry. */
function renameQueryValues(query: string, names: ReadonlyMap<string, string>): string {
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals < 0) return pair;
      const renamed = names.get(decodeOrKeep(pair.slice(equals + 1)));
      return renamed === undefined ? pair : `${pair.slice(0, equals + 1)}${renamed}`;
    })
    .join('&');
}

/**
 * A request target under the prefix as the /v1 target it stands for: the prefix removed and every
 * query value that is exactly an old source or method name given ours (clients send the names
 * they know). Anything else, malformed escapes included, is passed on untouched for /v1 to judge.
 */
export function v1Target(target: string): string {
  const rest = target.slice(GRIDCARBON_PREFIX.length);
  const mark = rest.indexOf('?');
  if (mark < 0) return rest;
  return `${rest.slice(0, mark)}?${renameQueryValues(rest.slice(mark + 1), INCOMING)}`;
}

const GRIDCARBON_V1 = `${GRIDCARBON_PREFIX}/v1`;

/** Whether a request target is under `/compat/gridcarbon/v1` (the path, not a look-alike). */
export function isGridcarbonTarget(target: string): boolean {
  // Asked of every request: the prefix is made once, not at each call.
  if (!target.startsWith(GRIDCARBON_V1)) return false;
  const next = target.charAt(GRIDCARBON_V1.length);
  return next === '' || next === '/' || next === '?';
}

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}
