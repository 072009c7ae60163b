import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { readFixture } from '../../test/fixtures.js';
import { simulatorDuringSuite } from '../../test/support/simulator-suite.js';

/**
 * The simulator's payloads against the real recordings in test/fixtures/upstreams: same
 * element paths, attributes, element order and field names, same value types.
 */

const sim = simulatorDuringSuite({ seed: 11 });

async function simulated(path: string, now: string): Promise<string> {
  sim.setNow(Date.parse(now));
  // A connection of its own: under load, a long answer can hold the event loop past the
  // server's keep-alive timeout, which then closes the kept-alive socket under the next request.
  const response = await fetch(`${sim.url}${path}`, { headers: { connection: 'close' } });
  return response.text();
}

const a75Path = (eic: string, start: string, end: string) =>
  `/api?securityToken=t&documentType=A75&processType=A16&in_Domain=${eic}&periodStart=${start}&periodEnd=${end}`;

/** FI's A75 over [start, end) (yyyyMMddHHmm), asked when the FI 2025 recording was made. */
const simulatedFi = (start: string, end: string) =>
  simulated(a75Path('10YFI-1--------U', start, end), '2025-10-24T18:00:00Z');

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  // The path matcher, not a path string per element: no callback here reads the path.
  jPath: false,
});

/** Every element and attribute path in a document, e.g. `GL_MarketDocument/TimeSeries/Period/Point/quantity`. */
function elementPaths(text: string): Set<string> {
  const paths = new Set<string>();
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) node.forEach((item) => walk(item, path));
    else if (typeof node === 'object' && node !== null) {
      for (const [name, child] of Object.entries(node)) {
        if (name === '#text') continue;
        const childPath = path ? `${path}/${name}` : name;
        paths.add(childPath);
        walk(child, childPath);
      }
    }
  };
  walk(xml.parse(text), '');
  return paths;
}

/** Element names in order of first appearance: the layout a streaming reader would meet. */
function elementOrder(text: string): string[] {
  return [...new Set([...text.matchAll(/<([A-Za-z_][\w.]*)/g)].map((match) => match[1] as string))];
}

/** Ours has the recording's element and attribute paths, and its elements in the same order. */
function expectLayoutOf(ours: string, recorded: string): void {
  expect(elementPaths(ours)).toEqual(elementPaths(recorded));
  expect(elementOrder(ours)).toEqual(elementOrder(recorded));
}

const withoutDeclaration = (paths: Set<string>) =>
  new Set([...paths].filter((path) => !path.startsWith('?xml')));

describe('ENTSO-E payloads match the recordings', () => {
  it('FI 2025, PT15M A03: same element paths, attributes and order', async () => {
    const recorded = readFixture('europe-tso', 'entsoe_A75_FI_2025-10-21T1200Z_PT15M_A03.xml');
    const ours = await simulatedFi('202510211200', '202510241200');
    expectLayoutOf(ours, recorded);
    // Indented with tabs like the recording, same header lines but for the ids and creation time.
    const head = (text: string) =>
      text
        .split('\n')
        .slice(0, 16)
        .map((line) => line.replace(/<(mRID|createdDateTime)>[^<]*</, '<$1>…<'));
    expect(head(ours)).toEqual(head(recorded));
    expect(ours.endsWith('</GL_MarketDocument>')).toBe(true);
  });

  it('FI 2023 and NO-5, PT60M A01: same element paths as simulated NO-5', async () => {
    const ours = elementPaths(
      await simulated(
        a75Path('10Y1001A1001A48H', '202305090900', '202305110900'),
        '2023-05-11T09:40:00Z',
      ),
    );
    for (const file of [
      'entsoe_A75_FI_2023-05-08T0700Z_PT60M_A01.xml',
      'entsoe_A75_NO-5_2023-05-09T0900Z_PT60M_A01.xml',
    ]) {
      expect(ours).toEqual(elementPaths(readFixture('europe-tso', file)));
    }
  });

  it('IT-CSUD with pumping: in- and out-series with the same paths as the recording', async () => {
    const recorded = readFixture(
      'europe-tso',
      'entsoe_A75_IT-CSUD_2023-01-17_PT60M_in-and-out-B10.xml',
    );
    const ours = await simulated(
      a75Path('10Y1001A1001A71M', '202301170000', '202301180000'),
      '2023-06-15T13:47:16Z',
    );
    // The recording was stored without its XML declaration (SOURCES.md); the rest must match.
    expect(withoutDeclaration(elementPaths(ours))).toEqual(elementPaths(recorded));
    expect(elementPaths(ours)).toContain(
      'GL_MarketDocument/TimeSeries/outBiddingZone_Domain.mRID/@codingScheme',
    );
  });

  it('the "no matching data" Acknowledgement has the recording\'s paths and order', async () => {
    const recorded = readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml');
    const ours = await simulatedFi('203001010000', '203001020000');
    expectLayoutOf(ours, recorded);
    expect(xml.parse(ours).Acknowledgement_MarketDocument.Reason.code).toBe('999');
  });
});

describe('EIA payloads match the recordings', () => {
  type Body = {
    response: Record<string, unknown> & { data: Record<string, unknown>[] };
    request: { params: Record<string, unknown> };
  } & Record<string, unknown>;
  const recorded = JSON.parse(
    readFixture(
      'us-agency',
      'eia_fuel-type-data_all-respondents_2025-04-20T17_to_2025-04-21T03_hourly.json',
    ),
  ) as Body;

  it('the recorded query gets the same envelope, warning, echo and record fields', async () => {
    // The recording's own query (SOURCES.md), with no facets: all respondents, truncated at 5000.
    const ours = JSON.parse(
      await simulated(
        '/v2/electricity/rto/fuel-type-data/data/?frequency=hourly&data[]=value&sort[0][column]=period&sort[0][direction]=desc&offset=0&length=5000&api_key=REDACTED',
        '2025-04-22T12:00:00Z',
      ),
    ) as Body;
    expect(Object.keys(ours)).toEqual(Object.keys(recorded));
    expect(Object.keys(ours.response)).toEqual(Object.keys(recorded.response));
    expect(ours.request).toEqual(recorded.request);
    expect(ours.response.warnings).toEqual(recorded.response.warnings);
    for (const field of ['dateFormat', 'frequency', 'description']) {
      expect(ours.response[field]).toEqual(recorded.response[field]);
    }
    expect([ours.apiVersion, ours.ExcelAddInVersion]).toEqual([
      recorded.apiVersion,
      recorded.ExcelAddInVersion,
    ]);
    expect(typeof ours.response.total).toBe(typeof recorded.response.total);
    expect(ours.response.data).toHaveLength(5000);
    const recordedRow = recorded.response.data[0] as Record<string, unknown>;
    for (const row of ours.response.data) {
      expect(Object.keys(row)).toEqual(Object.keys(recordedRow));
      for (const key of Object.keys(recordedRow))
        expect(typeof row[key]).toBe(typeof recordedRow[key]);
      expect(row.period).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}$/);
    }
  });

  it('uses the recorded respondent names and fuel type names', async () => {
    const recordedNames = new Map<string, unknown>();
    for (const row of recorded.response.data) {
      recordedNames.set(`respondent ${row.respondent}`, row['respondent-name']);
      recordedNames.set(`fueltype ${row.fueltype}`, row['type-name']);
    }
    const ours = JSON.parse(
      await simulated(
        '/v2/electricity/rto/fuel-type-data/data/?api_key=k&frequency=hourly&start=2025-04-20T12&end=2025-04-20T12',
        '2025-04-22T12:00:00Z',
      ),
    ) as Body;
    // The 10 served balancing authorities, US48 and the 51 other ones of the flow graph.
    expect(new Set(ours.response.data.map((row) => row.respondent)).size).toBe(62);
    for (const row of ours.response.data) {
      expect(row['respondent-name']).toBe(recordedNames.get(`respondent ${row.respondent}`));
      expect(row['type-name']).toBe(recordedNames.get(`fueltype ${row.fueltype}`));
    }
  });

  it('an empty result keeps the recorded empty envelope, with 2.1.8 types', async () => {
    const recordedEmpty = JSON.parse(
      readFixture('us-agency', 'eia_fuel-type-data_SC_NUC_empty-result.json'),
    ) as Body;
    const ours = JSON.parse(
      await simulated(
        '/v2/electricity/rto/fuel-type-data/data/?api_key=k&frequency=hourly&data[0]=value&facets[respondent][]=SC&facets[fueltype][]=NUC',
        '2025-04-22T12:00:00Z',
      ),
    ) as Body;
    // The recording is apiVersion 2.0.3: it adds timing fields and sends total as a number, which
    // 2.1.8 (the version simulated, as in the larger recording) sends as a string.
    const recordedKeys = Object.keys(recordedEmpty.response).filter(
      (key) => !key.includes('execution'),
    );
    expect(Object.keys(ours.response)).toEqual(recordedKeys);
    expect(ours.response).toMatchObject({ total: '0', data: [] });
  });
});

describe('NESO payloads match the recordings', () => {
  type Entry = { from: string; to: string; intensity: Record<string, unknown> };
  for (const [file, path] of [
    [
      'neso_national_fw48h_2023-03-14T1200Z_to_2023-03-16T1200Z.json',
      '/intensity/2023-03-14T12:01Z/fw48h',
    ],
    [
      'neso_national_pt24h_2023-03-13T1200Z_to_2023-03-14T1200Z.json',
      '/intensity/2023-03-14T12:01Z/pt24h',
    ],
  ] as const) {
    it(`${path}: the same half hours, fields and value types as ${file}`, async () => {
      const recorded = JSON.parse(readFixture('uk-operator', file)) as { data: Entry[] };
      // The scraper fetched at 12:01 (SOURCES.md).
      const ours = JSON.parse(await simulated(path, '2023-03-14T12:01:20Z')) as { data: Entry[] };
      expect(Object.keys(ours)).toEqual(Object.keys(recorded));
      expect(ours.data.map(({ from, to }) => [from, to])).toEqual(
        recorded.data.map(({ from, to }) => [from, to]),
      );
      ours.data.forEach((entry, i) => {
        const twin = recorded.data[i] as Entry;
        expect(Object.keys(entry)).toEqual(Object.keys(twin));
        expect(Object.keys(entry.intensity)).toEqual(Object.keys(twin.intensity));
        for (const key of Object.keys(twin.intensity)) {
          expect([key, typeof entry.intensity[key]]).toEqual([key, typeof twin.intensity[key]]);
        }
      });
    });
  }
});

describe('NESO generation payloads match the recordings', () => {
  type MixEntry = { from: string; to: string; generationmix: { fuel: string; perc: unknown }[] };
  const fuelsOf = (entry: MixEntry) => entry.generationmix.map(({ fuel }) => fuel);
  /** Same keys, the nine fuels in the recorded order, `perc` a number of at most one decimal. */
  const expectLike = (entry: MixEntry, twin: MixEntry) => {
    expect(Object.keys(entry)).toEqual(Object.keys(twin));
    expect(fuelsOf(entry)).toEqual(fuelsOf(twin));
    for (const item of entry.generationmix) {
      expect(Object.keys(item)).toEqual(['fuel', 'perc']);
      expect(typeof item.perc).toBe('number');
      expect(Math.round((item.perc as number) * 10) / 10).toBe(item.perc);
    }
  };

  it('/generation: `data` is one object, the half hour in progress', async () => {
    const recorded = JSON.parse(
      readFixture('uk-operator', 'neso_generation_current_2026-06-30T1200Z.json'),
    ) as { data: MixEntry };
    // Captured between 12:00 and 12:30Z (SOURCES.md).
    const ours = JSON.parse(await simulated('/generation', '2026-06-30T12:10:00Z')) as {
      data: MixEntry;
    };
    expect(Object.keys(ours)).toEqual(Object.keys(recorded));
    expect(Array.isArray(ours.data)).toBe(false);
    expect([ours.data.from, ours.data.to]).toEqual([recorded.data.from, recorded.data.to]);
    expectLike(ours.data, recorded.data);
  });

  it('/generation/{from}/{to}: the same 337 half hours, from the one ending at {from}', async () => {
    const recorded = JSON.parse(
      readFixture(
        'uk-operator',
        'neso_generation_range_2026-06-25T2330Z_to_2026-07-03T0000Z_7days.json',
      ),
    ) as { data: MixEntry[] };
    // Asked from midnight seven days before the capture, up to the capture (SOURCES.md).
    const ours = JSON.parse(
      await simulated('/generation/2026-06-26T00:00Z/2026-07-03T00:00Z', '2026-07-03T00:05:00Z'),
    ) as { data: MixEntry[] };
    expect(Object.keys(ours)).toEqual(Object.keys(recorded));
    expect(ours.data.map(({ from, to }) => [from, to])).toEqual(
      recorded.data.map(({ from, to }) => [from, to]),
    );
    ours.data.forEach((entry, i) => expectLike(entry, recorded.data[i] as MixEntry));
  });
});
