import './style.css';
import { ACCOUNTINGS, api, BASES, features } from './api.js';
import { el, missing } from './format.js';
import type { Route, Shared } from './controls.js';
import { renderOverview } from './overview.js';
import { renderStatus } from './status-page.js';

/**
 * The dashboard's shell: a hash router (`#/`, `#/zone/DE?range=7d&compare=FR,PL`, `#/status`,
 * each with `basis=` and `accounting=`) so that every view is a permalink served by the one page at `/`.
 */

const main = document.getElementById('main')!;

const shared: Shared = (() => {
  const index = api.index().catch(() => null);
  return {
    zones: api.zones(),
    index,
    status: api.status(),
    features: index.then(features),
  };
})();

// Drawn inside each view, in the same frame as its content: a banner added above the view later
// would push the whole page down.
let demoBanner: HTMLElement | null = null;
const bannerSet = shared.index.then((index) => {
  if (index?.attribution) document.getElementById('attribution')!.textContent = index.attribution;
  if (index?.status?.includes('DEMO MODE')) {
    demoBanner = el('p', {
      class: 'demo',
      role: 'note',
      text: 'Demo mode: every value on this page is synthetic, made up by a local simulator, not a real measurement.',
    });
  }
});

function parseRoute(): Route {
  // Only "#/..." is a route: any other hash (an in-page anchor) is the overview.
  const hash = location.hash.startsWith('#/') ? location.hash.slice(1) : '/';
  const [path = '/', query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  const asked = params.get('basis');
  const basis = BASES.find((b) => b === asked) ?? 'lifecycle';
  const counted = params.get('accounting');
  const accounting = ACCOUNTINGS.find((a) => a === counted) ?? 'production';
  const options = { params, basis, accounting };
  const zoneMatch = /^\/zone\/([^/]+)$/.exec(path);
  if (zoneMatch) return { view: 'zone', zone: decodeURIComponent(zoneMatch[1]!), ...options };
  if (path === '/status') return { view: 'status', zone: '', ...options };
  return { view: 'overview', zone: '', ...options };
}

let rendered = 0;
async function render(): Promise<void> {
  const route = parseRoute();
  const generation = ++rendered;
  // The renderers draw into `target`; the view around it also holds the demo banner.
  const target = el('div', { class: 'view-content' });
  const view = el('div', { class: `view view-${route.view}` }, target);
  const isCurrent = () => generation === rendered;
  // Shows the view as soon as it has something to show (the tiles before their sparklines, a
  // zone's heading and value before its charts).
  const show = () => {
    if (!isCurrent() || view.parentNode === main) return;
    // A control that had the focus keeps it in the view drawn anew (the basis radios, say).
    const focused = document.activeElement?.id;
    if (demoBanner) view.prepend(demoBanner.cloneNode(true));
    main.replaceChildren(view);
    if (focused) document.getElementById(focused)?.focus();
  };
  // The zone page's chunk travels while the index is read, not after.
  const zonePage = route.view === 'zone' ? import('./zone-page.js') : null;
  try {
    await bannerSet;
    if (zonePage) {
      const { renderZone } = await zonePage;
      await renderZone(target, route, shared, isCurrent, show);
    } else if (route.view === 'status') {
      await renderStatus(target, shared);
    } else {
      await renderOverview(target, route, shared, isCurrent, show);
    }
  } catch (error) {
    target.replaceChildren(
      missing(error instanceof Error ? error.message : 'The page could not be drawn.'),
    );
  }
  if (!isCurrent()) return;
  show();
  document.body.dataset['view'] = route.view;
  document.body.dataset['ready'] = String(generation);
  // Measured by bench/lighthouse.ts: the first screen drawn with its data, and usable.
  if (generation === 1) performance.mark('gridco2:first-screen');
}

// The view's path: '', '#' and '#/' are all the overview ('#/?basis=direct' too).
const pathOf = (hash: string) => {
  const path = hash.split('?')[0] ?? '';
  return path.startsWith('#/') ? path : '#/';
};
let lastPath = pathOf(location.hash);
window.addEventListener('hashchange', () => {
  // A new view takes the focus (readers announce it); a changed option keeps it where it is.
  const path = pathOf(location.hash);
  const moved = path !== lastPath;
  lastPath = path;
  void render().then(() => moved && main.focus());
});
// The skip link moves the focus without touching the hash (the router would take "#main").
document.querySelector<HTMLAnchorElement>('a.skip')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
void render();
