import { BlockList, isIP } from 'node:net';

/**
 * Which callback URLs a subscription may name (extensions §13): `http:` or `https:`, a host that
 * matches the allow-list, and no address in a loopback, link-local, private or unique-local
 * range unless the host is listed literally. The address check runs on every address the host
 * resolves to, at creation and again at each delivery (a name may be pointed elsewhere later).
 */

/** Ranges a callback may not reach unless its host is listed literally. */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address lies in a range callbacks may not reach by default. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4 written in IPv6 (::ffff:127.0.0.1, and the deprecated ::a.b.c.d) is its IPv4 address.
  const mapped = /^(?:::ffff:|::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1]!, 'ipv4');
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hexMapped) {
    const high = parseInt(hexMapped[1]!, 16);
    const low = parseInt(hexMapped[2]!, 16);
    return INTERNAL.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
  }
  return INTERNAL.check(address, 'ipv6');
}

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
  const internal = addresses.find(isInternalAddress);
  if (internal === undefined) return null;
  return {
    rule: 'url not allowed',
    hint:
      `the host ${normalHost(host)} resolves to ${internal}, a loopback, link-local, private or ` +
      'unique-local address; such targets need their host listed literally in WEBHOOK_ALLOW.',
  };
}
