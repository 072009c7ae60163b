// Code run in the page (page.evaluate) is typed with the DOM.
/// <reference lib="dom" />
/**
 * `npm run lighthouse`: the dashboard as a visitor gets it. Starts `gridco2 demo` (the built CLI,
 * in an empty folder, a year of synthetic history), then with the browser test's Chromium (the one
 * an npm package ships, or CHROME_PATH's: test/support/chromium.ts):
 *   1. Lighthouse (mobile preset, simulated throttling) on `/` and on a zone page: performance,
 *      accessibility and best practices, failing below 90 / 100 / 100 (performance varies with
 *      the machine's load: simulated throttling scales what it observes);
 *   2. the first screen on loopback, five loads without cache: time until it is drawn with its
 *      data (the page's `gridco2:first-screen` mark) and the bytes transferred (page, assets, API);
 *   3. a screenshot at 1280 px for the README (docs/dashboard.png).
 * --days sets the history (default 370); --report DIR writes each run's Lighthouse JSON there, and
 * every run prints the audits that cost points (opportunities with their estimated savings).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { chromium } from 'playwright-core';
import { chromiumForTests } from '../test/support/chromium.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROME = await chromiumForTests();
const THRESHOLDS = { performance: 90, accessibility: 100, 'best-practices': 100 } as const;
const daysArg = process.argv.indexOf('--days');
const DAYS = daysArg > 0 ? Number(process.argv[daysArg + 1]) : 370;
const reportArg = process.argv.indexOf('--report');
const REPORT_DIR = reportArg > 0 ? process.argv[reportArg + 1] : undefined;
const LOADS = 5;

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startDemo(cwd: string) {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/gridco2.js'), 'demo', '--days', String(DAYS)],
    {
      cwd,
      env: {
        PATH: process.env['PATH'] ?? '',
        PORT: '0',
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          child.stdout.off('data', check);
          resolve(match);
        }
      };
      child.stdout.on('data', check);
      child.once('exit', () => reject(new Error(`gridco2 demo exited:\n${output.slice(-2000)}`)));
      check();
    });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = (await waitFor(/"url":"(http[^"]+)".*"msg":"gridco2 serving"/))[1]!;
  process.stderr.write(`demo at ${url}; backfilling ${DAYS} days...\n`);
  await waitFor(/demo: backfill of \d+ days done/);
  // Forecasts are prepared from the history; wait for them where the server serves them.
  const index = await (await fetch(`${url}/v1`)).text();
  if (index.includes('/v1/schedule')) {
    for (let i = 0; i < 300; i++) {
      if ((await fetch(`${url}/v1/schedule?zones=all&duration_minutes=60`)).status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      // A demo with a year of history was seen never to finish its graceful close (its log
      // stops at "shutting down"); a second signal makes the server exit at once.
      const timer = setTimeout(() => {
        process.stderr.write('gridco2 demo still running 15 s after SIGTERM: sending a second\n');
        child.kill('SIGTERM');
      }, 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The audits of the scored categories that did not get full marks, with what they measured. */
function costlyAudits(lhr: {
  categories: Record<string, { auditRefs: { id: string; weight: number }[] }>;
  audits: Record<
    string,
    {
      score: number | null;
      scoreDisplayMode: string;
      displayValue?: string;
      details?: { type?: string; overallSavingsMs?: number; overallSavingsBytes?: number };
    }
  >;
}): string[] {
  const lines: string[] = [];
  for (const [category, { auditRefs }] of Object.entries(lhr.categories)) {
    for (const { id, weight } of auditRefs) {
      const audit = lhr.audits[id];
      if (!audit || audit.score === null || audit.score >= 1) continue;
      if (audit.scoreDisplayMode === 'informative' || audit.scoreDisplayMode === 'notApplicable') {
        continue;
      }
      const savings = audit.details?.type === 'opportunity' ? audit.details : undefined;
      lines.push(
        `${category}: ${id} score ${audit.score} (weight ${weight})${audit.displayValue ? ` ${audit.displayValue}` : ''}` +
          (savings
            ? `, saves ~${savings.overallSavingsMs ?? 0} ms / ${Math.round((savings.overallSavingsBytes ?? 0) / 1024)} KiB`
            : ''),
      );
    }
  }
  return lines;
}

async function runLighthouse(url: string, page: string): Promise<Record<string, number>> {
  const chrome = await chromeLauncher.launch({
    chromePath: CHROME.executablePath,
    envVars: CHROME.env,
    chromeFlags: ['--headless=new', '--disable-gpu', ...CHROME.args],
  });
  try {
    const result = await lighthouse(`${url}${page}`, {
      port: chrome.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: Object.keys(THRESHOLDS),
    });
    if (!result) throw new Error('lighthouse returned nothing');
    const { categories, audits } = result.lhr;
    if (REPORT_DIR) {
      mkdirSync(REPORT_DIR, { recursive: true });
      const name =
        page === '/' ? 'overview' : page.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');
      writeFileSync(
        join(REPORT_DIR, `lighthouse-${name}.json`),
        JSON.stringify(result.lhr, null, 1),
      );
    }
    for (const line of costlyAudits(result.lhr as unknown as Parameters<typeof costlyAudits>[0])) {
      process.stderr.write(`${page}: ${line}\n`);
    }
    const failing = Object.values(audits)
      .filter(
        (audit) => audit.score !== null && audit.score < 1 && audit.scoreDisplayMode === 'binary',
      )
      .map((audit) => audit.id);
    if (process.env['LH_DEBUG']) {
      process.stderr.write(
        JSON.stringify(audits['layout-shifts']?.details, null, 1).slice(0, 4000) + '\n',
      );
    }
    for (const id of failing) {
      const items =
        (
          audits[id]?.details as
            { items?: { node?: { snippet?: string; explanation?: string } }[] } | undefined
        )?.items ?? [];
      process.stderr.write(`audit not passed: ${id}\n`);
      for (const item of items.slice(0, 5)) {
        process.stderr.write(
          `  ${item.node?.snippet ?? ''} ${item.node?.explanation?.split('\n')[1] ?? ''}\n`,
        );
      }
    }
    return {
      ...Object.fromEntries(
        Object.entries(categories).map(([id, category]) => [
          id,
          Math.round((category.score ?? 0) * 100),
        ]),
      ),
      fcpMs: Math.round(audits['first-contentful-paint']?.numericValue ?? NaN),
      lcpMs: Math.round(audits['largest-contentful-paint']?.numericValue ?? NaN),
      ttiMs: Math.round(audits['interactive']?.numericValue ?? NaN),
      totalBytes: Math.round(audits['total-byte-weight']?.numericValue ?? NaN),
      tbtMs: Math.round(audits['total-blocking-time']?.numericValue ?? NaN),
      cls: audits['cumulative-layout-shift']?.numericValue ?? NaN,
      siMs: Math.round(audits['speed-index']?.numericValue ?? NaN),
    };
  } finally {
    chrome.kill();
  }
}

async function measureLoopback(url: string) {
  const browser = await chromium.launch({
    executablePath: CHROME.executablePath,
    env: CHROME.env,
    args: [...CHROME.args],
  });
  try {
    const times: number[] = [];
    const bytes: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      // A new context each time: an empty cache, as a first visit.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${url}/`);
      await page.waitForFunction(
        () => performance.getEntriesByName('gridco2:first-screen').length > 0,
      );
      const figures = await page.evaluate(() => {
        const entries = [
          ...performance.getEntriesByType('navigation'),
          ...performance.getEntriesByType('resource'),
        ] as PerformanceResourceTiming[];
        return {
          ms: performance.getEntriesByName('gridco2:first-screen')[0]!.startTime,
          bytes: entries.reduce((sum, entry) => sum + entry.transferSize, 0),
          requests: entries.length,
        };
      });
      times.push(figures.ms);
      bytes.push(figures.bytes);
      requests.push(figures.requests);
      if (i === 0) {
        await page.waitForTimeout(300);
        await page.screenshot({ path: join(ROOT, 'docs/dashboard.png') });
      }
      await context.close();
    }
    return {
      medianMs: Math.round(median(times)),
      maxMs: Math.round(Math.max(...times)),
      bytes: median(bytes),
      requests: median(requests),
    };
  } finally {
    await browser.close();
  }
}

const cwd = mkdtempSync(join(tmpdir(), 'gridco2-lighthouse-'));
const demo = await startDemo(cwd);
let failed = false;
try {
  const pages = { overview: '/', 'zone page': '/#/zone/DE' } as const;
  const results: [string, Record<string, number>][] = [];
  for (const [name, page] of Object.entries(pages)) {
    results.push([`${name} (${page})`, await runLighthouse(demo.url, page)]);
  }
  const loopback = await measureLoopback(demo.url);
  console.log(
    `Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version} (mobile, simulated throttling), ${CHROME.origin}:`,
  );
  for (const [name, scores] of results) {
    console.log(`  ${name}`);
    for (const [category, minimum] of Object.entries(THRESHOLDS)) {
      const score = scores[category] ?? 0;
      const ok = score >= minimum;
      failed ||= !ok;
      console.log(
        `    ${category.padEnd(15)} ${String(score).padStart(3)}  (at least ${minimum}) ${ok ? 'ok' : 'TOO LOW'}`,
      );
    }
    console.log(
      `    simulated: first contentful paint ${scores['fcpMs']} ms, largest ${scores['lcpMs']} ms, interactive ${scores['ttiMs']} ms, speed index ${scores['siMs']} ms, blocking ${scores['tbtMs']} ms, layout shift ${scores['cls']?.toFixed(3)}, ${Math.round((scores['totalBytes'] ?? 0) / 1024)} KiB`,
    );
  }
  console.log(`First screen on loopback (${LOADS} cold loads, 1280 px):`);
  console.log(
    `  drawn with its data: median ${loopback.medianMs} ms, slowest ${loopback.maxMs} ms (target under 1000 ms)`,
  );
  console.log(
    `  transferred: ${(loopback.bytes / 1024).toFixed(1)} KiB compressed in ${loopback.requests} requests (target under 150 KB)`,
  );
  console.log('Screenshot: docs/dashboard.png');
  failed ||= loopback.medianMs >= 1000 || loopback.bytes >= 150_000;
} finally {
  await demo.stop();
  rmSync(cwd, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
