import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, nextAttemptAt, RETRY_FOR_MS, retryDelayMs } from './backoff.js';
import {
  type Condition,
  evaluate,
  eventId,
  findWindow,
  type Observed,
  type ZoneView,
} from './conditions.js';
import { newSecret, secretMatches, signWebhook } from './signature.js';
import { checkResolved, checkTargetUrl, TargetPolicy } from './targets.js';

const T0 = Date.UTC(2026, 10, 21) / 1000;
const H = 3600;

describe('webhook signatures', () => {
  it('verify with the Standard Webhooks reference library, and fail when anything changes', () => {
    fc.assert(
      fc.property(fc.json(), fc.integer({ min: 1e9, max: 2e9 }), (body, ts) => {
        const secret = newSecret();
        const headers = signWebhook(secret, 'evt_1', ts, body);
        const verifier = new Webhook(secret);
        // The library checks the timestamp against its own clock: sign with a current one too.
        const now = Math.floor(Date.now() / 1000);
        expect(verifier.verify(body, { ...signWebhook(secret, 'evt_1', now, body) })).toEqual(
          JSON.parse(body),
        );
        expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
        const tampered = signWebhook(secret, 'evt_1', now, body);
        expect(() => verifier.verify(body + 'x', { ...tampered })).toThrow();
        expect(() => new Webhook(newSecret()).verify(body, { ...tampered })).toThrow();
      }),
      { numRuns: 50 },
    );
  });

  it('compares secrets exactly', () => {
    const secret = newSecret();
    expect(secretMatches(secret, secret)).toBe(true);
    expect(secretMatches(secret.slice(0, -2), secret)).toBe(false);
    expect(secretMatches('', secret)).toBe(false);
  });
});

describe('retry backoff', () => {
  it('grows with jitter within bounds, is capped, and stops after 24 hours', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (n, r) => {
          const full = Math.min(DEFAULT_BACKOFF.capMs, DEFAULT_BACKOFF.baseMs * 2 ** (n - 1));
          const delay = retryDelayMs(n, r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(full / 2));
          expect(delay).toBeLessThanOrEqual(full);
        },
      ),
    );
    // Failing every time: attempts keep coming for 24 hours, then stop.
    let at = 0;
    let failures = 0;
    for (;;) {
      failures++;
      const next = nextAttemptAt(0, at, failures, 0.5);
      if (next === null) break;
      at = next;
    }
    expect(at).toBeLessThanOrEqual(RETRY_FOR_MS);
    expect(at).toBeGreaterThan(RETRY_FOR_MS - DEFAULT_BACKOFF.capMs);
    expect(failures).toBeGreaterThan(20);
    expect(failures).toBeLessThan(40);
  });
});

describe('callback targets', () => {
  const open = new TargetPolicy(['*']);
  it('refuses a host resolving to any special-purpose address unless listed literally', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '::1', 'fd00::1', '::ffff:a9fe:a9fe']) {
      expect(checkResolved('hook.example', [address], open)?.hint, address).toContain(address);
    }
    expect(checkResolved('hook.example', ['8.8.8.8', '2606:4700::1111'], open)).toBeNull();
    expect(checkResolved('hook.example', ['8.8.8.8', '10.0.0.1'], open)).not.toBeNull();
    expect(checkResolved('hook.example', [], open)?.hint).toContain('does not resolve');
    const literal = new TargetPolicy(['127.0.0.1', '*.example.org']);
    expect(checkResolved('127.0.0.1', ['127.0.0.1'], literal)).toBeNull();
    expect(checkResolved('a.example.org', ['127.0.0.1'], literal)).not.toBeNull();
  });

  it('matches host patterns and URL rules', () => {
    const policy = new TargetPolicy(['*.example.org', 'hooks.test']);
    expect(policy.allows('a.example.org')).toBe(true);
    expect(policy.allows('a.b.EXAMPLE.org.')).toBe(true);
    expect(policy.allows('example.org')).toBe(false);
    expect(policy.allows('badexample.org')).toBe(false);
    expect(policy.allows('hooks.test')).toBe(true);
    expect(policy.allows('x.hooks.test')).toBe(false);
    expect(checkTargetUrl('https://a.example.org/x', policy)).toBeInstanceOf(URL);
    expect(checkTargetUrl('ftp://a.example.org/x', policy)).toMatchObject({ rule: 'invalid url' });
    expect(checkTargetUrl('not a url', policy)).toMatchObject({ rule: 'invalid url' });
    expect(checkTargetUrl('https://u:p@a.example.org/', policy)).toMatchObject({
      rule: 'invalid url',
    });
    expect(checkTargetUrl('https://evil.test/', policy)).toMatchObject({
      rule: 'url not allowed',
    });
    expect(new TargetPolicy(['[::1]']).listsLiterally('[::1]')).toBe(true);
  });
});

const reading = (ts: number, tenths: number, level: Observed['level'] = null): Observed => ({
  ts,
  tenths,
  level,
});
const view = (newest: Observed, extra: Partial<ZoneView> = {}): ZoneView => ({
  zone: 'DE',
  newest,
  changed: [newest],
  forecast: [],
  stepSeconds: H,
  ...extra,
});

describe('conditions', () => {
  it('fires a crossing once per entry, at once when it already holds', () => {
    const subscription = {
      id: 'sub_1',
      basis: 'default',
      condition: { type: 'below', gco2eq_kwh: 200 } as Condition,
    };
    const values = [1500, 1999, 2000, 2500, 1990, 1800, 2100, 100];
    let state = {};
    const fired: number[] = [];
    values.forEach((tenths, i) => {
      const result = evaluate(subscription, view(reading(T0 + i * H, tenths)), state);
      state = result.state;
      for (const event of result.events) {
        expect(event.type).toBe('crossed');
        expect(event.id).toBe(eventId('sub_1', 'crossed', 'DE', String(T0 + i * H)));
        fired.push(i);
      }
    });
    expect(fired).toEqual([0, 4, 7]);
  });

  it('fires on entering a level set, never on an unknown level', () => {
    const subscription = {
      id: 's',
      basis: 'direct',
      condition: { type: 'level', levels: ['low', 'very-low'] } as Condition,
    };
    const first = evaluate(subscription, view(reading(T0, 1, null)), {});
    expect(first.events).toEqual([]);
    const second = evaluate(subscription, view(reading(T0 + H, 1, 'low')), first.state);
    expect(second.events).toHaveLength(1);
    expect(second.events[0]).toMatchObject({ level: 'low', basis: 'direct', gco2eq_kwh: 0.1 });
  });

  it('announces each published or revised reading, with a new id for a revision', () => {
    const subscription = {
      id: 's',
      basis: 'default',
      condition: { type: 'published' } as Condition,
    };
    const a = evaluate(subscription, view(reading(T0, 1000)), {}).events[0]!;
    const b = evaluate(subscription, view(reading(T0, 1001)), {}).events[0]!;
    expect(a.id).not.toBe(b.id);
    expect(evaluate(subscription, view(reading(T0, 1000)), {}).events[0]!.id).toBe(a.id);
  });

  it('finds the first window as brute force does, and does not repeat it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 0, maxLength: 80 }),
        fc.integer({ min: 1, max: 72 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 0, max: 400 }),
        (values, within, duration, max) => {
          const condition = {
            type: 'window',
            within_hours: within,
            duration_hours: duration,
            max_gco2eq_kwh: max / 10,
          } as const;
          const forecast = values.map((tenths, i) => reading(T0 + (i + 1) * H, tenths));
          const found = findWindow(condition, forecast, H, T0 + H);
          // Brute force: the first start whose next `duration` hours are all low enough.
          let expected: number | null = null;
          for (let s = 0; s + duration <= Math.min(values.length, within); s++) {
            if (
              values.slice(s, s + duration).every((v) => v <= max) &&
              (s === 0 || values[s - 1]! > max)
            ) {
              expected = s;
              break;
            }
          }
          expect(found === null ? null : (found.start - T0) / H - 1).toBe(expected);
          if (found) {
            const run = values.slice((found.start - T0) / H - 1, (found.end - T0) / H - 1);
            expect(run.every((v) => v <= max)).toBe(true);
            expect((found.end - found.start) / H).toBeGreaterThanOrEqual(duration);
            expect(found.end).toBeLessThanOrEqual(T0 + H + within * H);
          }
        },
      ),
      { numRuns: 300 },
    );
    const condition: Condition = {
      type: 'window',
      within_hours: 24,
      duration_hours: 2,
      max_level: 'low',
    };
    const subscription = { id: 's', basis: 'default', condition };
    const forecast = [
      reading(T0 + H, 1, 'high'),
      reading(T0 + 2 * H, 1, 'very-low'),
      reading(T0 + 3 * H, 1, 'low'),
      reading(T0 + 4 * H, 1, 'low'),
    ];
    const first = evaluate(subscription, view(reading(T0, 1), { forecast }), {});
    expect(first.events[0]!.window).toEqual({
      start: '2026-11-21T02:00:00Z',
      end: '2026-11-21T05:00:00Z',
      gco2eq_kwh: 0.1,
    });
    // An hour later the same window, shorter by its first hour: not announced again.
    const later = evaluate(
      subscription,
      view(reading(T0 + 2 * H, 1), { forecast: forecast.slice(2) }),
      first.state,
    );
    expect(later.events).toEqual([]);
  });
});
