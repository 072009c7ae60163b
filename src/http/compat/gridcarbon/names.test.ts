import { describe, expect, it } from 'vitest';
import { isGridcarbonTarget, renameCsv, renameJson, renameLinkHeader, v1Target } from './names.js';

describe('renameJson', () => {
  it.each([
    ['{"source":"europe-tso"}', '{"source":"entsoe"}'],
    ['{"source":"us-agency","x":"uk-operator"}', '{"source":"eia","x":"uk-neso"}'],
    ['{"method":"upstream:uk-operator:actual"}', '{"method":"upstream:uk-neso:actual"}'],
    ['{"method":"upstream:uk-operator:forecast"}', '{"method":"upstream:uk-neso:forecast"}'],
    ['{"mappings":{"europe-tso":{"B01":"biomass"}}}', '{"mappings":{"entsoe":{"B01":"biomass"}}}'],
    ['["computed:v1","computed:v1:direct"]', '["computed:v1","computed:v1:direct"]'],
    // Inside a longer text a name stays as it is; only exact values are names.
    ['{"note":"europe-tso: last run ok"}', '{"note":"europe-tso: last run ok"}'],
    [
      '{"d":"`upstream:uk-operator:actual` for GB"}',
      '{"d":"`upstream:uk-operator:actual` for GB"}',
    ],
    ['{"x":"Europe-TSO","y":"europe-tso "}', '{"x":"Europe-TSO","y":"europe-tso "}'],
    // An escaped quote never opens or closes a string.
    ['{"a":"say \\"europe-tso\\"","b":"us-agency"}', '{"a":"say \\"europe-tso\\"","b":"eia"}'],
    [
      '{"a":"ends in a backslash\\\\","b":"uk-operator"}',
      '{"a":"ends in a backslash\\\\","b":"uk-neso"}',
    ],
    // Paths of /v1 named in text move under the prefix; look-alikes do not.
    [
      '{"h":"see /v1/zones for the zone codes"}',
      '{"h":"see /compat/gridcarbon/v1/zones for the zone codes"}',
    ],
    ['{"h":"see /v1 for the endpoints"}', '{"h":"see /compat/gridcarbon/v1 for the endpoints"}'],
    ['{"/v1/intensity":{}}', '{"/compat/gridcarbon/v1/intensity":{}}'],
    [
      '{"a":"/v10","b":"x/v1","c":"/v1x","d":"https://h/v1/a"}',
      '{"a":"/v10","b":"x/v1","c":"/v1x","d":"https://h/v1/a"}',
    ],
    ['{"a":"/compat/gridcarbon/v1/zones"}', '{"a":"/compat/gridcarbon/v1/zones"}'],
  ])('%s', (input, expected) => {
    expect(renameJson(input)).toBe(expected);
  });

  it('keeps every byte between strings, and returns the same text when nothing changes', () => {
    const text = '{"zone":"DE","v":301.0, "n":null,\n"m":"computed:v1"}';
    expect(renameJson(text)).toBe(text);
    expect(renameJson('{"v":1e3, "m" : "us-agency" }')).toBe('{"v":1e3, "m" : "eia" }');
  });

  it('renames complete lines of a stream (server-sent events, NDJSON) alike', () => {
    expect(
      renameJson(
        'event: reading\nid: 7\ndata: {"zone":"GB","method":"upstream:uk-operator:actual"}\n\n',
      ),
    ).toBe('event: reading\nid: 7\ndata: {"zone":"GB","method":"upstream:uk-neso:actual"}\n\n');
  });
});

describe('renameCsv', () => {
  it('renames a cell that is exactly a name, and nothing else', () => {
    expect(
      renameCsv(
        'zone,ts,gco2eq_kwh,method\nGB,2026-11-21T12:00:00Z,101,upstream:uk-operator:actual\n' +
          'DE,2026-11-21T12:00:00Z,301,computed:v1\n',
      ),
    ).toBe(
      'zone,ts,gco2eq_kwh,method\nGB,2026-11-21T12:00:00Z,101,upstream:uk-neso:actual\n' +
        'DE,2026-11-21T12:00:00Z,301,computed:v1\n',
    );
  });
});

describe('renameLinkHeader', () => {
  it('points a Link within the prefix and names query values as the client did', () => {
    expect(renameLinkHeader('</v1/intensity?zone=FR&from=2026-01-01T00:00:00Z>; rel="next"')).toBe(
      '</compat/gridcarbon/v1/intensity?zone=FR&from=2026-01-01T00:00:00Z>; rel="next"',
    );
    expect(renameLinkHeader('</v1/x?source=us-agency&a>; rel="next"')).toBe(
      '</compat/gridcarbon/v1/x?source=eia&a>; rel="next"',
    );
    expect(renameLinkHeader('<https://elsewhere/v1>; rel="x"')).toBe(
      '<https://elsewhere/v1>; rel="x"',
    );
  });
});

describe('the request target', () => {
  it.each([
    ['/compat/gridcarbon/v1', true],
    ['/compat/gridcarbon/v1/', true],
    ['/compat/gridcarbon/v1?x=1', true],
    ['/compat/gridcarbon/v1/intensity/latest', true],
    ['/compat/gridcarbon/v10', false],
    ['/compat/gridcarbon/v1x/zones', false],
    ['/compat/gridcarbon', false],
    ['/compat/GRIDCARBON/v1', false],
    ['/v1/zones', false],
  ])('%s is under the prefix: %s', (target, under) => {
    expect(isGridcarbonTarget(target)).toBe(under);
  });

  it('is the /v1 target, old names in the query read as ours', () => {
    expect(v1Target('/compat/gridcarbon/v1/zones')).toBe('/v1/zones');
    expect(v1Target('/compat/gridcarbon/v1/x?source=entsoe&zone=DE')).toBe(
      '/v1/x?source=europe-tso&zone=DE',
    );
    expect(v1Target('/compat/gridcarbon/v1/x?m=upstream%3Auk-neso%3Aactual&bad=%E0%A4%A')).toBe(
      '/v1/x?m=upstream:uk-operator:actual&bad=%E0%A4%A',
    );
    expect(v1Target('/compat/gridcarbon/v1/x?zone=eiab&flag')).toBe('/v1/x?zone=eiab&flag');
  });
});
