import { describe, expect, it } from 'vitest';
import { describeRefusal, refusedAddress } from './addresses.js';
import { checkResolved, checkTargetUrl, TargetPolicy } from './targets.js';

/**
 * The callback address classifier (issue 37) over the IANA special-purpose registries: each
 * range by its first and last address (and one inside), every IPv6 spelling that carries an
 * internal IPv4 address, and public addresses around the ranges' edges, which must pass.
 */

/** [address, the range its refusal must name]. */
const IPV4_REFUSED: readonly (readonly [string, string])[] = [
  ['0.0.0.0', '0.0.0.0/8'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['10.0.0.0', '10.0.0.0/8'],
  ['10.255.255.255', '10.0.0.0/8'],
  ['100.64.0.0', '100.64.0.0/10'],
  ['100.127.255.255', '100.64.0.0/10'],
  ['127.0.0.1', '127.0.0.0/8'],
  ['127.255.255.254', '127.0.0.0/8'],
  ['169.254.0.1', '169.254.0.0/16'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['172.16.0.0', '172.16.0.0/12'],
  ['172.31.255.255', '172.16.0.0/12'],
  ['192.0.0.0', '192.0.0.0/24'],
  ['192.0.0.1', '192.0.0.0/24'],
  ['192.0.0.9', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.0.255', '192.0.0.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.31.196.1', '192.31.196.0/24'],
  ['192.52.193.1', '192.52.193.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['192.168.0.1', '192.168.0.0/16'],
  ['192.168.255.255', '192.168.0.0/16'],
  ['192.175.48.1', '192.175.48.0/24'],
  ['198.18.0.1', '198.18.0.0/15'],
  ['198.19.255.255', '198.18.0.0/15'],
  ['198.51.100.7', '198.51.100.0/24'],
  ['203.0.113.7', '203.0.113.0/24'],
  ['224.0.0.1', '224.0.0.0/4'],
  ['239.255.255.255', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4'],
  ['255.255.255.254', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
];

const IPV4_PUBLIC = [
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.0.3.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
];

const IPV6_REFUSED: readonly (readonly [string, string])[] = [
  ['::', '::/128'],
  ['::1', '::1/128'],
  ['64:ff9b:1::', '64:ff9b:1::/48'],
  ['64:ff9b:1::808:808', '64:ff9b:1::/48'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::/48'],
  ['100::', '100::/64'],
  ['100::1', '100::/64'],
  ['100::ffff:ffff:ffff:ffff', '100::/64'],
  ['100:0:0:1::1', '100:0:0:1::/64'],
  ['2001:1::1', '2001::/23'],
  ['2001:2::1', '2001::/23'],
  ['2001:10::1', '2001::/23'],
  ['2001:1ff:ffff::1', '2001::/23'],
  ['2001:db8::', '2001:db8::/32'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db8::/32'],
  ['2620:4f:8000::1', '2620:4f:8000::/48'],
  ['3fff::1', '3fff::/20'],
  ['3fff:fff:ffff::1', '3fff::/20'],
  ['5f00::1', '5f00::/16'],
  ['fc00::1', 'fc00::/7'],
  ['fd12:3456::1', 'fc00::/7'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fc00::/7'],
  ['fe80::1', 'fe80::/10'],
  ['fe80::1%eth0', 'fe80::/10'],
  ['febf::1', 'fe80::/10'],
  ['fec0::1', 'fec0::/10'],
  ['ff02::1', 'ff00::/8'],
  ['ff0e::1', 'ff00::/8'],
  // Reserved by the IETF, outside 2000::/3.
  ['1::1', '::/0'],
  ['4000::1', '::/0'],
  ['e000::1', '::/0'],
];

/** [IPv6 spelling, the IPv4 address it leads to, that address's range]. */
const EMBEDDED_REFUSED: readonly (readonly [string, string, string])[] = [
  // The spellings of the probe (issue 37), as the URL parser leaves them.
  ['64:ff9b::a9fe:a9fe', '169.254.169.254', '169.254.0.0/16'],
  ['64:ff9b::a00:1', '10.0.0.1', '10.0.0.0/8'],
  ['2002:7f00:1::', '127.0.0.1', '127.0.0.0/8'],
  ['2002:c0a8:1::', '192.168.0.1', '192.168.0.0/16'],
  ['::7f00:1', '127.0.0.1', '127.0.0.0/8'],
  ['::ffff:0:7f00:1', '127.0.0.1', '127.0.0.0/8'],
  // And the other ways to write them.
  ['64:ff9b::169.254.169.254', '169.254.169.254', '169.254.0.0/16'],
  ['64:FF9B::A9FE:A9FE', '169.254.169.254', '169.254.0.0/16'],
  ['64:ff9b:0:0:0:0:a00:1', '10.0.0.1', '10.0.0.0/8'],
  ['64:ff9b::c612:1', '198.18.0.1', '198.18.0.0/15'],
  ['::127.0.0.1', '127.0.0.1', '127.0.0.0/8'],
  ['::10.0.0.1', '10.0.0.1', '10.0.0.0/8'],
  ['::ffff:127.0.0.1', '127.0.0.1', '127.0.0.0/8'],
  ['::ffff:7f00:1', '127.0.0.1', '127.0.0.0/8'],
  ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1', '127.0.0.0/8'],
  ['::ffff:a9fe:a9fe', '169.254.169.254', '169.254.0.0/16'],
  ['::ffff:0:127.0.0.1', '127.0.0.1', '127.0.0.0/8'],
  ['::ffff:0:a00:1', '10.0.0.1', '10.0.0.0/8'],
  ['2002:a9fe:a9fe::1', '169.254.169.254', '169.254.0.0/16'],
  ['2002:a00:1:ffff::1', '10.0.0.1', '10.0.0.0/8'],
  ['2002:c000:1::', '192.0.0.1', '192.0.0.0/24'],
  // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (0x80ff:fffe).
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1', '127.0.0.0/8'],
  ['2001::ffff:ffff:f5ff:fffe', '10.0.0.1', '10.0.0.0/8'],
  ['2001::5601:5601', '169.254.169.254', '169.254.0.0/16'],
];

/** Global unicast, and the forms carrying a public IPv4 address, which lead there. */
const IPV6_PUBLIC = [
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:200::1',
  '2001:db7:ffff::1',
  '2001:db9::1',
  '3ffe::1',
  '3fff:1000::1',
  '64:ff9b::808:808',
  '64:ff9b::8.8.8.8',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '2002:808:808::1',
  // Teredo with client 8.8.8.8 (inverted: f7f7:f7f7).
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

describe('webhook target addresses', () => {
  it('refuses every IPv4 special-purpose range, naming it', () => {
    for (const [address, cidr] of IPV4_REFUSED) {
      expect(refusedAddress(address)?.range.cidr, address).toBe(cidr);
    }
    for (const address of IPV4_PUBLIC) expect(refusedAddress(address), address).toBeNull();
  });

  it('refuses every IPv6 special-purpose range, naming it', () => {
    for (const [address, cidr] of IPV6_REFUSED) {
      const refused = refusedAddress(address);
      expect(refused?.range.cidr, address).toBe(cidr);
      expect(refused?.embedded, address).toBeUndefined();
    }
    for (const address of IPV6_PUBLIC) expect(refusedAddress(address), address).toBeNull();
  });

  it('judges an IPv6 address carrying an IPv4 one by the IPv4 address', () => {
    for (const [address, ipv4, cidr] of EMBEDDED_REFUSED) {
      const refused = refusedAddress(address);
      expect(refused?.range.cidr, address).toBe(cidr);
      expect(refused?.embedded?.ipv4, address).toBe(ipv4);
    }
  });

  it('refuses what is not an IP address', () => {
    for (const text of ['', 'localhost', '1.2.3', '::g', '[::1]']) {
      expect(refusedAddress(text)?.range.name, text).toBe('not an IP address');
    }
  });

  it('names the range and the carried address in the refusal', () => {
    expect(describeRefusal('64:ff9b::a9fe:a9fe', refusedAddress('64:ff9b::a9fe:a9fe')!)).toBe(
      '64:ff9b::a9fe:a9fe, which leads to 169.254.169.254 by NAT64 64:ff9b::/96 (RFC 6052) ' +
        '(link-local (RFC 3927), 169.254.0.0/16)',
    );
    expect(describeRefusal('198.18.0.1', refusedAddress('198.18.0.1')!)).toBe(
      '198.18.0.1 (benchmarking (RFC 2544), 198.18.0.0/15)',
    );
  });

  /** Every spelling of the probe, in a URL as a client sends it, through the URL parser. */
  const PROBED = [
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[64:ff9b::a00:1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[2002:c0a8:1::]/',
    'http://[::127.0.0.1]/',
    'http://[::ffff:0:7f00:1]/',
    'http://198.18.0.1/',
    'http://192.0.0.1/',
    'http://[100::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
  ];

  it('refuses each probed URL unless its host is listed literally', () => {
    const open = new TargetPolicy(['*']);
    for (const text of PROBED) {
      const url = checkTargetUrl(text, open);
      expect(url, text).toBeInstanceOf(URL);
      const host = (url as URL).hostname.replace(/^\[(.*)\]$/, '$1');
      const refusal = checkResolved(host, [host], open);
      expect(refusal, text).toMatchObject({ rule: 'url not allowed' });
      expect(refusal?.hint, text).toMatch(/\/\d+\)/);
      const listed = new TargetPolicy([(url as URL).hostname]);
      expect(checkResolved(host, [host], listed), text).toBeNull();
    }
  });
});
