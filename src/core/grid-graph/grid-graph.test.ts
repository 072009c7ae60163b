import { describe, expect, it } from 'vitest';
import { ANNUAL_INTENSITIES } from '../consumption/fallback.js';
import { HOUR } from '../time.js';
import { findZone, zonesOfSource } from '../zones.js';
import { EUROPE_BORDERS, EUROPE_NODES } from './europe.js';
import { interchangeFlows, US_INTERCHANGES, US_NODES, usNodeOf } from './us.js';

const codesOf = (role: string, nodes: typeof EUROPE_NODES) =>
  nodes.filter((node) => node.role === role).map((node) => node.code);

describe('the European graph', () => {
  const codes = new Set(EUROPE_NODES.map((node) => node.code));

  it('has every served European zone and GB under its served code and EIC, then the neighbours', () => {
    const served = zonesOfSource('europe-tso');
    expect(codesOf('zone', EUROPE_NODES)).toEqual([...served.map((zone) => zone.code), 'GB']);
    for (const zone of served) {
      expect(EUROPE_NODES.find((node) => node.code === zone.code)?.upstreamId).toBe(
        zone.upstreamId,
      );
    }
    expect(EUROPE_NODES.find((node) => node.code === 'GB')).toEqual({
      code: 'GB',
      name: findZone('GB')?.name,
      role: 'zone',
      upstreamId: '10YGB----------A',
    });
    expect(codesOf('extra', EUROPE_NODES)).toEqual(
      'EE LV LT SK SI HR BG RS BA ME MK XK MD'.split(' '),
    );
    expect(codesOf('boundary', EUROPE_NODES)).toEqual('AL BY MT RU RU-KGD TR UA FR-COR'.split(' '));
  });

  it('gives every area an EIC of 16 characters, each once (Corsica has none)', () => {
    const eics = EUROPE_NODES.flatMap((node) => (node.upstreamId ? [node.upstreamId] : []));
    expect(eics).toHaveLength(EUROPE_NODES.length - 1);
    expect(new Set(eics).size).toBe(eics.length);
    const linkEics = EUROPE_BORDERS.flatMap((border) =>
      border.links.flatMap((link) => [link.eicA, link.eicB]),
    );
    for (const eic of [...eics, ...linkEics]) expect(eic).toMatch(/^1\dY[0-9A-Z-]{13}$/);
  });

  it('joins known nodes, each border once, each link of a pair of EICs once', () => {
    const pairs = EUROPE_BORDERS.map((border) => [border.a, border.b].sort().join(' '));
    expect(new Set(pairs).size).toBe(pairs.length);
    for (const border of EUROPE_BORDERS) {
      expect(codes.has(border.a) && codes.has(border.b) && border.a !== border.b).toBe(true);
      expect(border.links.length).toBeGreaterThan(0);
    }
    const links = EUROPE_BORDERS.flatMap((border) =>
      border.links.map((link) => [link.eicA, link.eicB].sort().join(' ')),
    );
    expect(new Set(links).size).toBe(links.length);
  });

  it('reaches every node, and no border joins two boundary nodes', () => {
    const role = new Map(EUROPE_NODES.map((node) => [node.code, node.role]));
    const bordered = new Set(EUROPE_BORDERS.flatMap((border) => [border.a, border.b]));
    expect(EUROPE_NODES.filter((node) => !bordered.has(node.code))).toEqual([]);
    expect(
      EUROPE_BORDERS.filter(
        (border) => role.get(border.a) === 'boundary' && role.get(border.b) === 'boundary',
      ),
    ).toEqual([]);
  });

  it('sums the links of the borders published in parts, with the codes of flows.md §3.2', () => {
    const find = (a: string, b: string) =>
      EUROPE_BORDERS.find((border) => border.a === a && border.b === b)?.links;
    expect(find('FR-COR', 'IT-SARD')).toEqual([
      { eicA: '10Y1001A1001A885', eicB: '10Y1001A1001A74G' },
      { eicA: '10Y1001A1001A893', eicB: '10Y1001A1001A74G' },
    ]);
    expect(find('BE', 'DE')).toEqual([
      { eicA: '10YBE----------2', eicB: '10Y1001A1001A83F' },
      { eicA: '10YBE----------2', eicB: '10YLU-CEGEDEL-NQ' },
    ]);
    // The DE node's own code (DE-LU) where the platform publishes the border under it.
    expect(find('CH', 'DE')).toEqual([{ eicA: '10YCH-SWISSGRIDZ', eicB: '10Y1001A1001A82H' }]);
    expect(find('IT-CSUD', 'ME')).toEqual([{ eicA: '10YIT-GRTN-----B', eicB: '10YCS-CG-TSO---S' }]);
    expect(find('SK', 'UA')).toEqual([{ eicA: '10YSK-SEPS-----K', eicB: '10Y1001C--000182' }]);
  });

  it('asks two A11 documents per link in a cycle: the request count of docs/upstreams.md §9.6', () => {
    const links = EUROPE_BORDERS.reduce((sum, border) => sum + border.links.length, 0);
    expect(EUROPE_BORDERS).toHaveLength(110);
    expect(2 * links).toBe(224);
  });
});

describe('the US graph', () => {
  it('has every balancing authority with fuel-type data, the 10 served under their codes', () => {
    const served = zonesOfSource('us-agency').filter((zone) => zone.upstreamId !== 'US48');
    expect(codesOf('zone', US_NODES)).toEqual(served.map((zone) => zone.code));
    expect(usNodeOf('BPAT')?.code).toBe('US-BPA');
    expect(usNodeOf('ERCO')?.code).toBe('US-ERCOT');
    // 61 in the 2025 payload, and five retired since 2019.
    expect(codesOf('zone', US_NODES).length + codesOf('extra', US_NODES).length).toBe(66);
    expect(codesOf('boundary', US_NODES)).toEqual(
      'AESO BCHA HQT IESO MHEB NBSO SPC CEN'.split(' '),
    );
    for (const aggregate of ['US48', 'CAL', 'MIDA', 'CAN', 'MEX']) {
      expect(usNodeOf(aggregate)).toBeUndefined();
    }
  });

  it('lists the 153 pairs that report interchange, 11 of them across the border', () => {
    expect(US_INTERCHANGES).toHaveLength(153);
    const foreign = US_INTERCHANGES.filter((pair) =>
      pair.some((code) => US_NODES.find((node) => node.code === code)?.role === 'boundary'),
    );
    expect(foreign).toHaveLength(11);
    expect(US_INTERCHANGES).toContainEqual(['US-BPA', 'US-CAISO']);
  });

  it('keeps each report as reported, leaves out what is no node, and names unlisted pairs', () => {
    const T = Date.UTC(2020, 0, 6, 5) / 1000;
    const series = (...values: number[]) => new Map(values.map((mw, i) => [T + i * HOUR, mw]));
    const result = interchangeFlows(
      new Map([
        [
          'FPC',
          new Map([
            ['FPL', series(-329, -323)],
            ['NSB', series(7)],
          ]),
        ],
        ['FPL', new Map([['FPC', series(330)]])],
        ['US48', new Map([['CAN', series(5)]])],
        [
          'MISO',
          new Map([
            ['MEX', series(1)],
            ['IESO', series(-200)],
          ]),
        ],
      ]),
      { fromTs: T, toTs: T + 2 * HOUR },
    );
    expect(result.flows).toEqual([
      { from: 'US-FPC', to: 'US-FPL', ts: T, mw: -329 },
      { from: 'US-FPC', to: 'US-FPL', ts: T + HOUR, mw: -323 },
      { from: 'US-FPC', to: 'US-NSB', ts: T, mw: 7 },
      { from: 'US-FPL', to: 'US-FPC', ts: T, mw: 330 },
      { from: 'US-MISO', to: 'IESO', ts: T, mw: -200 },
    ]);
    expect(result.unknownCodes).toEqual(['CAN', 'MEX', 'US48']);
    expect(result.unlistedPairs).toEqual(['US-FPC US-NSB']);
  });
});

describe('both graphs and the consumption solver', () => {
  it('name the neighbours of the annual intensity table as boundary nodes', () => {
    const boundary = new Map(
      [...EUROPE_NODES, ...US_NODES]
        .filter((node) => node.role === 'boundary')
        .map((node) => [node.code, node]),
    );
    const codes = ANNUAL_INTENSITIES.flatMap((row) => row.codes);
    // Not nodes: Morocco and Armenia have no A11 border with a node; CFE left EIA-930 in 2018.
    expect(codes.filter((code) => !boundary.has(code))).toEqual(['MA', 'AM', 'CFE']);
    // The boundary nodes without a row enter at the `other` factor.
    expect([...boundary.keys()].filter((code) => !codes.includes(code))).toEqual([
      'AL',
      'BY',
      'MT',
      'FR-COR',
    ]);
  });
});
