import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses a webhook may not reach by default: the special-purpose ranges of the IANA
 * IPv4 and IPv6 registries (iana.org/assignments/iana-ipv4-special-registry and
 * iana-ipv6-special-registry), multicast, and every IPv6 address outside global unicast. An IPv6
 * address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64,
 * 6to4, Teredo) is judged by the IPv4 address it leads to, since that is where its packets go
 * (a NAT64 gateway, a 6to4 or Teredo relay, or the host's own IPv4 stack).
 */

/** A range a callback may not reach, as a refusal names it. */
interface SpecialRange {
  /** The registry's name for it, and its RFC. */
  readonly name: string;
  /** The range, e.g. `10.0.0.0/8`. */
  readonly cidr: string;
}

/** Why an address may not be reached: its range, and the IPv4 address it carries if any. */
export interface Refused {
  readonly range: SpecialRange;
  /** For an IPv6 address carrying an IPv4 one: how it carries it and the address. */
  readonly embedded?: { readonly form: string; readonly ipv4: string };
}

type Rule = readonly [cidr: string, name: string];

/** Most specific first: the first match names the refusal. */
const IPV4_RULES: readonly Rule[] = [
  ['255.255.255.255/32', 'limited broadcast (RFC 919)'],
  ['0.0.0.0/8', '"this network" (RFC 791)'],
  ['10.0.0.0/8', 'private-use (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space (RFC 6598)'],
  ['127.0.0.0/8', 'loopback (RFC 1122)'],
  ['169.254.0.0/16', 'link-local (RFC 3927)'],
  ['172.16.0.0/12', 'private-use (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments (RFC 6890)'],
  ['192.0.2.0/24', 'documentation, TEST-NET-1 (RFC 5737)'],
  ['192.31.196.0/24', 'AS112-v4 (RFC 7535)'],
  ['192.52.193.0/24', 'AMT (RFC 7450)'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private-use (RFC 1918)'],
  ['192.175.48.0/24', 'direct delegation AS112 service (RFC 7534)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation, TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'documentation, TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0/4', 'multicast (RFC 5771)'],
  ['240.0.0.0/4', 'reserved (RFC 1112)'],
];

/**
 * The IPv6 ranges refused as such, once the forms carrying an IPv4 address are decoded. The
 * local-use NAT64 prefix is refused whatever it carries: its operator chooses where the IPv4
 * address sits in it.
 */
const IPV6_RULES: readonly Rule[] = [
  ['::/128', 'unspecified address (RFC 4291)'],
  ['::1/128', 'loopback (RFC 4291)'],
  ['64:ff9b:1::/48', 'local-use IPv4/IPv6 translation (RFC 8215)'],
  ['100::/64', 'discard-only (RFC 6666)'],
  ['100:0:0:1::/64', 'dummy IPv6 prefix (RFC 9780)'],
  ['2001::/23', 'IETF protocol assignments (RFC 2928)'],
  ['2001:db8::/32', 'documentation (RFC 3849)'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service (RFC 7534)'],
  ['3fff::/20', 'documentation (RFC 9637)'],
  ['5f00::/16', 'segment routing SIDs (RFC 9602)'],
  ['fc00::/7', 'unique-local (RFC 4193)'],
  ['fe80::/10', 'link-local (RFC 4291)'],
  ['fec0::/10', 'deprecated site-local (RFC 3879)'],
  ['ff00::/8', 'multicast (RFC 4291)'],
];

/** Everything else outside 2000::/3 is reserved by the IETF: no public host lives there. */
const NOT_GLOBAL_UNICAST: SpecialRange = {
  name: 'outside IPv6 global unicast 2000::/3 (RFC 4291)',
  cidr: '::/0',
};
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

const NOT_AN_ADDRESS: SpecialRange = { name: 'not an IP address', cidr: '' };

/** Each rule with its own BlockList, so that a match can be named. */
function compile(rules: readonly Rule[], family: 'ipv4' | 'ipv6') {
  return rules.map(([cidr, name]) => {
    const [network, prefix] = cidr.split('/') as [string, string];
    const list = new BlockList();
    list.addSubnet(network, Number(prefix), family);
    return { range: { name, cidr }, list };
  });
}
const IPV4 = compile(IPV4_RULES, 'ipv4');
const IPV6 = compile(IPV6_RULES, 'ipv6');

/** The special-purpose range of an IPv4 address, or undefined for a public one. */
function ipv4Range(address: string): SpecialRange | undefined {
  return IPV4.find((rule) => rule.list.check(address, 'ipv4'))?.range;
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad is two of them). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string) => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const front = groupsOf(head);
  if (tail === undefined) return front;
  const back = groupsOf(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const dottedQuad = (high: number, low: number) =>
  `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** The IPv4 address an IPv6 address carries and how, or undefined. */
function embeddedIpv4(groups: readonly number[]): { form: string; ipv4: string } | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroUpTo = (n: number) => groups.slice(0, n).every((group) => group === 0);
  if (zeroUpTo(5) && g5 === 0xffff)
    return { form: 'IPv4-mapped ::ffff:0:0/96', ipv4: dottedQuad(g6, g7) };
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) {
    return { form: 'IPv4-translated ::ffff:0:0:0/96 (RFC 2765)', ipv4: dottedQuad(g6, g7) };
  }
  // ::/96 less :: and ::1, which are named as themselves.
  if (zeroUpTo(6) && (g6 !== 0 || g7 > 1)) {
    return { form: 'IPv4-compatible ::/96 (RFC 4291)', ipv4: dottedQuad(g6, g7) };
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return { form: 'NAT64 64:ff9b::/96 (RFC 6052)', ipv4: dottedQuad(g6, g7) };
  }
  if (g0 === 0x2002) return { form: '6to4 2002::/16 (RFC 3056)', ipv4: dottedQuad(g1, g2) };
  if (g0 === 0x2001 && g1 === 0) {
    // Teredo: the client's public address is stored inverted in the last 32 bits.
    return { form: 'Teredo 2001::/32 (RFC 4380)', ipv4: dottedQuad(g6 ^ 0xffff, g7 ^ 0xffff) };
  }
  return undefined;
}

/**
 * Why `address` may not be reached by a callback, or null when it is a public address. Anything
 * that is not an IP address is refused.
 */
export function refusedAddress(address: string): Refused | null {
  // A zone id (fe80::1%eth0) only ever accompanies a link-local address: judge the address.
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) {
    const range = ipv4Range(bare);
    return range ? { range } : null;
  }
  if (family !== 6) return { range: NOT_AN_ADDRESS };
  // Decoded first: a Teredo address lies in 2001::/23 but leads to its client's IPv4 address.
  const embedded = embeddedIpv4(ipv6Groups(bare.toLowerCase()));
  if (embedded) {
    const range = ipv4Range(embedded.ipv4);
    return range ? { range, embedded } : null;
  }
  const named = IPV6.find((rule) => rule.list.check(bare, 'ipv6'));
  if (named) return { range: named.range };
  return GLOBAL_UNICAST.check(bare, 'ipv6') ? null : { range: NOT_GLOBAL_UNICAST };
}

/** A refusal in words: `10.0.0.1 (in private-use 10.0.0.0/8 (RFC 1918))`. */
export function describeRefusal(address: string, refused: Refused): string {
  const { range, embedded } = refused;
  const inRange = range.cidr === '' ? range.name : `${range.name}, ${range.cidr}`;
  if (!embedded) return `${address} (${inRange})`;
  return `${address}, which leads to ${embedded.ipv4} by ${embedded.form} (${inRange})`;
}
