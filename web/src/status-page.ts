import { api, type Status } from './api.js';
import { el, fmtAge, missing } from './format.js';
import type { Shared } from './controls.js';

/**
 * `/v1/status` for people: one sentence per source on how old its newest values are against the
 * age at which they count as stale, a table of the same figures that fits a 360 px screen, and
 * the service's own note (its last ingestion runs, in operators' words) folded away below.
 */

const NAMES: Readonly<Record<string, { short: string; long: string }>> = {
  'europe-tso': { short: 'Europe', long: 'Europe (ENTSO-E)' },
  'us-agency': { short: 'United States', long: 'The United States (EIA)' },
  'uk-operator': { short: 'Great Britain', long: 'Great Britain (NESO)' },
};

type SourceStatus = Status['sources'][number];

const zonesWord = (count: number) => `${count} zone${count === 1 ? '' : 's'}`;

/** The range of ages of a source's newest values: "4.1 h", or "4.1 h to 6.1 h". */
function ages(s: SourceStatus): string {
  const freshest = fmtAge(s.freshest_lag_hours);
  const stalest = fmtAge(s.stalest_lag_hours);
  return freshest === stalest ? freshest : `${freshest} to ${stalest}`;
}

/** The same, short enough for the table at 360 px: "4.1-6.1 h". */
function agesShort(s: SourceStatus): string {
  const [freshest, freshestUnit] = fmtAge(s.freshest_lag_hours).split(' ');
  const [stalest, stalestUnit] = fmtAge(s.stalest_lag_hours).split(' ');
  if (freshest === stalest && freshestUnit === stalestUnit) return `${freshest} ${freshestUnit}`;
  return freshestUnit === stalestUnit
    ? `${freshest}\u2013${stalest} ${stalestUnit}`
    : `${freshest} ${freshestUnit}\u2013${stalest} ${stalestUnit}`;
}

function sentence(s: SourceStatus): string {
  const name = NAMES[s.source]?.long ?? s.source;
  const one = s.zones === 1;
  if (!s.ok) {
    return `${name} is behind: even its freshest zone's newest value is ${fmtAge(s.freshest_lag_hours)} old, past the ${s.stale_after_hours} h after which a value counts as stale.`;
  }
  const values = one
    ? `its one zone's newest value is ${ages(s)} old`
    : `the newest values of its ${zonesWord(s.zones)} are ${ages(s)} old`;
  const stale =
    s.stalest_lag_hours > s.stale_after_hours
      ? `; some zones are older than the ${s.stale_after_hours} h after which a value counts as stale`
      : `, within the ${s.stale_after_hours} h after which a value counts as stale`;
  return `${name} is delivering: ${values}${stale}.`;
}

export async function renderStatus(target: HTMLElement, _shared: Shared): Promise<void> {
  const heading = el('h1', { text: 'Status of the data sources' });
  let status;
  try {
    status = await api.status();
  } catch (error) {
    target.replaceChildren(heading, missing((error as Error).message));
    return;
  }
  const table = el(
    'table',
    { class: 'status-table' },
    el('caption', { text: `As of ${status.ts.replace('T', ' ').replace('Z', ' UTC')}` }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['Source', 'Zones', 'Age of newest values', 'Stale after', 'State'].map((text) =>
          el('th', { scope: 'col', text }),
        ),
      ),
    ),
    el(
      'tbody',
      {},
      ...status.sources.map((s) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: NAMES[s.source]?.short ?? s.source }),
          el('td', { class: 'num', text: String(s.zones) }),
          el('td', { class: 'ages', text: agesShort(s) }),
          el('td', { class: 'num', text: `${s.stale_after_hours} h` }),
          el(
            'td',
            {},
            el('span', {
              class: s.ok ? 'state ok' : 'state behind',
              // Short, so that five columns fit 360 px; the sentences above say it in full.
              text: s.ok ? 'ok' : 'behind',
            }),
          ),
        ),
      ),
    ),
  );
  target.replaceChildren(
    heading,
    el('p', {
      class: status.ok ? 'summary ok' : 'summary behind',
      text: status.ok
        ? 'Every source is delivering: each has published values within the age at which they count as stale.'
        : 'At least one source is behind, or the data store reports a problem: the values of its zones may be stale.',
    }),
    el(
      'ul',
      { class: 'status-sentences' },
      ...status.sources.map((s) => el('li', { text: sentence(s) })),
    ),
    el('div', { class: 'table-wrap' }, table),
    el(
      'details',
      { class: 'status-note' },
      el('summary', { text: "The service's own note: its last ingestion runs, for operators" }),
      el('p', { text: status.note }),
    ),
  );
}
