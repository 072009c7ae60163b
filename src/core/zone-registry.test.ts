import { describe, expect, it } from 'vitest';
import type { ZoneRegistry } from './zone-registry.js';
import { CONTRACT_REGISTRY, EXTRA_ZONES, registryOfAll, servableZones } from './zone-registry.js';
import { HOUR } from './time.js';
import { ZONES } from './zones.js';

const NOW = Date.UTC(2026, 11, 2, 8) / 1000;
const codes = (registry: ZoneRegistry) => registry.zones.map((zone) => zone.code);

describe('the extra zones (extensions §16)', () => {
  it('are the extra nodes of both graphs, Europe first, under codes no zone has', () => {
    const extra = EXTRA_ZONES.map((zone) => zone.code);
    // docs/deploy.md: 13 European bidding zones and 56 US balancing authorities.
    expect(EXTRA_ZONES.filter((zone) => zone.source === 'europe-tso')).toHaveLength(13);
    expect(EXTRA_ZONES.filter((zone) => zone.source === 'us-agency')).toHaveLength(56);
    expect(extra.slice(0, 4)).toEqual(['EE', 'LV', 'LT', 'SK']);
    expect(extra).toContain('US-AECI');
    expect(extra.indexOf('MD')).toBeLessThan(extra.indexOf('US-AECI'));
    expect(new Set(extra).size).toBe(extra.length);
    expect(extra.filter((code) => CONTRACT_REGISTRY.has(code))).toEqual([]);
    // Boundary nodes publish no mix: never a zone.
    expect(extra).not.toContain('TR');
    expect(extra).not.toContain('AESO');
  });

  it('carry the name, source and upstream id of their node', () => {
    expect(EXTRA_ZONES.find((zone) => zone.code === 'SK')).toEqual({
      code: 'SK',
      name: 'Slovakia',
      source: 'europe-tso',
      resolutionMin: 60,
      upstreamId: '10YSK-SEPS-----K',
    });
    expect(EXTRA_ZONES.find((zone) => zone.code === 'US-DUK')).toEqual({
      code: 'US-DUK',
      name: 'Duke Energy Carolinas',
      source: 'us-agency',
      resolutionMin: 60,
      upstreamId: 'DUK',
    });
  });
});

describe('ZoneRegistry', () => {
  it('of the contract: exactly the 45, in their order', () => {
    expect(CONTRACT_REGISTRY.zones).toBe(ZONES);
    expect(servableZones('contract')).toBe(ZONES);
    expect(CONTRACT_REGISTRY.find(' dk-1 ')?.code).toBe('DK-1');
    expect(CONTRACT_REGISTRY.find('EE')).toBeUndefined();
    expect(CONTRACT_REGISTRY.has('dk-1')).toBe(false);
    expect(CONTRACT_REGISTRY.indexOf('GB')).toBe(44);
    expect(CONTRACT_REGISTRY.indexOf('EE')).toBeUndefined();
  });

  it('of ZONES=all: the 45, then each extra node with a complete mix in the last 7 days', () => {
    const registry = registryOfAll(
      new Map([
        ['US-AECI', NOW - HOUR],
        ['SK', NOW - 7 * 24 * HOUR],
        ['EE', NOW - 2 * HOUR],
        // A week and a second old: gone.
        ['LT', NOW - 7 * 24 * HOUR - 1],
      ]),
      NOW,
    );
    expect(codes(registry)).toEqual([...ZONES.map((zone) => zone.code), 'EE', 'SK', 'US-AECI']);
    expect(registry.find('us-aeci')?.source).toBe('us-agency');
    expect(registry.find('LT')).toBeUndefined();
    expect(registry.indexOf('EE')).toBe(45);
    expect(servableZones('all')).toEqual([...ZONES, ...EXTRA_ZONES]);
  });

  it('without any recent node: the 45 alone, the same as the contract', () => {
    const registry = registryOfAll(new Map([['EE', NOW - 30 * 24 * HOUR]]), NOW);
    expect(codes(registry)).toEqual(codes(CONTRACT_REGISTRY));
    expect(registry.sameAs(CONTRACT_REGISTRY)).toBe(true);
    expect(registryOfAll(new Map([['EE', NOW]]), NOW).sameAs(CONTRACT_REGISTRY)).toBe(false);
  });
});
