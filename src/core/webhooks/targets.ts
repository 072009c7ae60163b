import { describeRefusal, refusedAddress } from './addresses.js';

/**
 * Which callback URLs a subscription may name (extensions §13): `http:` or `https:`, a host that
 * matches the allow-list, and no address in a special-purpose range (`addresses.ts`) unless the
 * host is listed literally. The address check runs on every address the host resolves to, at
 * creation and again at each delivery (a name may be pointed elsewhere later).
 */

/** The allow-list: host patterns, `*.example.org` for any subdomain, `*` for every host. */
export class TargetPolicy {
  private readonly patterns: readonly string[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((pattern) => normalHost(pattern));
  }

  /** Whether `host` matches a pattern. */
  allows(host: string): boolean {
    const name = normalHost(host);
    return this.patterns.some(
      (pattern) =>
        pattern === '*' ||
        pattern === name ||
        (pattern.startsWith('*.') &&
          name.endsWith(pattern.slice(1)) &&
          name.length > pattern.length - 1),
    );
  }

  /** Whether `host` is listed as it is (no wildcard): its internal addresses are allowed. */
  listsLiterally(host: string): boolean {
    return this.patterns.includes(normalHost(host));
  }
}

/** Lower case, without the brackets of an IPv6 literal or a trailing dot. */
function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

export type TargetRefusal = { readonly rule: string; readonly hint: string };

/** The URL's own checks (no name resolution): the refusal, or the parsed URL. */
export function checkTargetUrl(text: string, policy: TargetPolicy): URL | TargetRefusal {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { rule: 'invalid url', hint: 'url must be an absolute http: or https: URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { rule: 'invalid url', hint: 'url must use https: or http:.' };
  }
  if (url.username !== '' || url.password !== '') {
    return { rule: 'invalid url', hint: 'url must not carry a user name or password.' };
  }
  if (!policy.allows(url.hostname)) {
    return {
      rule: 'url not allowed',
      hint: `the host ${normalHost(url.hostname)} does not match WEBHOOK_ALLOW.`,
    };
  }
  return url;
}

/**
 * The refusal for a host that resolved to `addresses`, or null when every one may be reached.
 * A host that resolves to nothing is refused too.
 */
export function checkResolved(
  host: string,
  addresses: readonly string[],
  policy: TargetPolicy,
): TargetRefusal | null {
  if (addresses.length === 0) {
    return { rule: 'url not allowed', hint: `the host ${normalHost(host)} does not resolve.` };
  }
  if (policy.listsLiterally(host)) return null;
  for (const address of addresses) {
    const refused = refusedAddress(address);
    if (!refused) continue;
    const name = normalHost(host);
    const where =
      name === address
        ? `the address ${describeRefusal(address, refused)}`
        : `the host ${name} resolves to ${describeRefusal(address, refused)}`;
    return {
      rule: 'url not allowed',
      hint:
        `${where}: special-purpose addresses are refused; ` +
        'such a target needs its host listed literally in WEBHOOK_ALLOW.',
    };
  }
  return null;
}
