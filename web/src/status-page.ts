import { api } from './api.js';
import { el, fmtAge, missing } from './format.js';
import type { Shared } from './main.js';

/** `/v1/status` for people: every source's lag against its threshold, and the service's note. */
export async function renderStatus(target: HTMLElement, _shared: Shared): Promise<void> {
  const heading = el('h1', { text: 'Status of the data sources' });
  let status;
  try {
    status = await api.status();
  } catch (error) {
    target.replaceChildren(heading, missing((error as Error).message));
    return;
  }
  const names: Record<string, string> = {
    'europe-tso': 'Europe (ENTSO-E)',
    'us-agency': 'United States (EIA)',
    'uk-operator': 'Great Britain (NESO)',
  };
  const table = el(
    'table',
    { class: 'status-table' },
    el('caption', { text: `Freshness at ${status.ts.replace('T', ' ').replace('Z', ' UTC')}` }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['Source', 'Zones', 'Freshest zone', 'Stalest zone', 'Stale after', 'State'].map(
          (text) => el('th', { scope: 'col', text }),
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
          el('th', { scope: 'row', text: names[s.source] ?? s.source }),
          el('td', { text: String(s.zones) }),
          el('td', { text: `${fmtAge(s.freshest_lag_hours)} behind` }),
          el('td', { text: `${fmtAge(s.stalest_lag_hours)} behind` }),
          el('td', { text: `${s.stale_after_hours} h` }),
          el(
            'td',
            {},
            el('span', {
              class: s.ok ? 'state ok' : 'state behind',
              text: s.ok ? 'delivering' : 'behind',
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
        ? 'Every source is within its freshness window.'
        : 'At least one source is behind, or the data store reports a problem: the values of its zones may be stale.',
    }),
    el('div', { class: 'table-wrap' }, table),
    el('h2', { text: 'What the service says' }),
    el('p', { class: 'status-note', text: status.note }),
  );
}
