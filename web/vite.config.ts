import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * The dashboard's build: web/ -> dist/web, file names with a content hash under assets/ (served
 * with immutable caching by src/http/routes/dashboard.ts), the first screen's styles inlined in the page,
 * and a .br and a .gz beside every text file so the server never compresses at request time.
 */

const OUT_DIR = fileURLToPath(new URL('../dist/web', import.meta.url));
const COMPRESSIBLE = /\.(html|js|css|svg|json|txt)$/;

/**
 * The stylesheet the page links (the first screen's, about 2 KB compressed) inlined as a <style>:
 * one round trip fewer before the first paint, where a linked stylesheet blocks rendering. The
 * zone page's styles (with uPlot's) stay a file of their own, loaded with its chunk.
 */
function inlinePageCss(): Plugin {
  return {
    name: 'gridco2-inline-page-css',
    apply: 'build',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const page = bundle['index.html'];
      if (page?.type !== 'asset') return;
      let html = String(page.source);
      for (const [name, file] of Object.entries(bundle)) {
        if (file.type !== 'asset' || !name.endsWith('.css')) continue;
        const link = new RegExp(`<link rel="stylesheet"[^>]*href="/${name}"[^>]*>`);
        if (!link.test(html)) continue;
        html = html.replace(link, () => `<style>${String(file.source).trim()}</style>`);
        Reflect.deleteProperty(bundle, name);
      }
      page.source = html;
    },
  };
}

function precompress(): Plugin {
  return {
    name: 'gridco2-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((name) => {
          const path = join(dir, name);
          return statSync(path).isDirectory() ? walk(path) : [path];
        });
      for (const file of walk(OUT_DIR).filter((path) => COMPRESSIBLE.test(path))) {
        const body = readFileSync(file);
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
            },
          }),
        );
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // No asset inlined as a data: URL: every image or font is its own hashed file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  plugins: [inlinePageCss(), precompress()],
});
