import { execFile } from 'node:child_process';
import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';

/**
 * The Chromium that the browser test and `npm run lighthouse` drive. CHROME_PATH, when set, names
 * one (it must exist: a wrong path is an error, never a silent fallback). Otherwise the headless
 * Chromium that the `@sparticuz/chromium` npm package ships inside its tarball (brotli-compressed,
 * version pinned in package.json, nothing downloaded at install or run time), unpacked once into
 * node_modules/.cache/ with the NSS libraries it links and a font, so a machine needs no browser
 * and no browser libraries of its own.
 */
export interface ChromiumForTests {
  readonly executablePath: string;
  /** The environment to launch it with: this process's, plus the unpacked libraries and font. */
  readonly env: Record<string, string | undefined>;
  /** Flags to launch it with. */
  readonly args: readonly string[];
  /** Where it came from, said in one line by the callers. */
  readonly origin: string;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const execFileAsync = promisify(execFile);
/** Root, as on CI, gets no sandbox. */
const ARGS = ['--no-sandbox'];

function packageBin(): { bin: string; version: string } {
  // The package exports only its code (build/esm/index.js); bin/ sits two levels above it.
  const packageDir = join(dirname(require.resolve('@sparticuz/chromium')), '..', '..');
  const { version } = require(join(packageDir, 'package.json')) as { version: string };
  return { bin: join(packageDir, 'bin'), version };
}

async function unbrotli(source: string, target: string): Promise<void> {
  await pipeline(createReadStream(source), createBrotliDecompress(), createWriteStream(target));
}

/** A .tar.br unpacked by the system's tar (every Linux has one) into `dir`. */
async function untar(source: string, dir: string): Promise<void> {
  const tarball = join(dir, `${basename(source, '.br')}`);
  await unbrotli(source, tarball);
  try {
    await execFileAsync('tar', ['-x', '--no-same-owner', '-f', tarball, '-C', dir]);
  } finally {
    rmSync(tarball, { force: true });
  }
}

/** Unpacks the package's Chromium into `dir` (through a temporary folder, so never half-done). */
async function unpack(bin: string, dir: string): Promise<void> {
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    await unbrotli(join(bin, 'chromium.br'), join(partial, 'chromium'));
    await Promise.all([
      // SwiftShader's GL libraries are looked up beside the binary.
      untar(join(bin, 'swiftshader.tar.br'), partial),
      // NSS and expat, which the binary links (built for Amazon Linux 2023: glibc 2.34 or newer).
      untar(join(bin, 'al2023.tar.br'), partial),
      untar(join(bin, 'fonts.tar.br'), partial),
    ]);
    chmodSync(join(partial, 'chromium'), 0o755);
    // The package's fonts.conf names Lambda's folders; ours names the unpacked font.
    await writeFile(
      join(partial, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <dir>${join(dir, 'fonts')}</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n` +
        `</fontconfig>\n`,
    );
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

export async function chromiumForTests(): Promise<ChromiumForTests> {
  const chosen = process.env['CHROME_PATH'];
  if (chosen !== undefined && chosen !== '') {
    if (!existsSync(chosen)) throw new Error(`CHROME_PATH=${chosen}: no such file`);
    return {
      executablePath: chosen,
      env: { ...process.env },
      args: ARGS,
      origin: `CHROME_PATH=${chosen}`,
    };
  }
  const { bin, version } = packageBin();
  const dir = join(ROOT, 'node_modules/.cache/gridco2-chromium', version);
  const executablePath = join(dir, 'chromium');
  if (!existsSync(executablePath)) await unpack(bin, dir);
  const env: Record<string, string | undefined> = {
    ...process.env,
    LD_LIBRARY_PATH: [join(dir, 'lib'), process.env['LD_LIBRARY_PATH']].filter(Boolean).join(':'),
    // The headless shell takes navigator.language from LANG (not from --lang), and LANG=C.UTF-8
    // gives 'en-US@posix', which Intl (uPlot's number format) rejects.
    LANG: 'en_US.UTF-8',
  };
  // A machine without fontconfig's own configuration would draw no text at all.
  if (!existsSync('/etc/fonts/fonts.conf')) env['FONTCONFIG_PATH'] = dir;
  return {
    executablePath,
    env,
    args: ARGS,
    origin: `the headless Chromium ${version} of the npm package @sparticuz/chromium`,
  };
}
