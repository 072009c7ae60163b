import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What the layers under HTTP never import: the serving layers above them (docs/architecture.md). */
const SERVING_LAYERS = {
  regex: '^\\.\\.?/(\\.\\./)*(http|stream|queries|webhooks)/|^fastify',
  message:
    'the data layers sit below the serving ones: never http/, stream/, queries/, webhooks/ or ' +
    'Fastify (docs/architecture.md)',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'bench/results/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      // noUncheckedIndexedAccess is on, so `!` after a checked index is the honest spelling.
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: 'no focused tests' },
        { object: 'describe', property: 'only', message: 'no focused tests' },
        { object: 'test', property: 'only', message: 'no focused tests' },
        { object: 'it', property: 'skip', message: 'no skipped tests' },
        { object: 'describe', property: 'skip', message: 'no skipped tests' },
        { object: 'test', property: 'skip', message: 'no skipped tests' },
      ],
    },
  },
  // Promises in a service of timers: none left floating, none where a callback is expected.
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'web/src/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Fastify's options take handlers that may return a promise (a reply is thenable too).
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { properties: false } },
      ],
    },
  },
  // One rounding rule and one spelling of each unit (core/units.ts): `toFixed` rounds the binary
  // double, so 124.55 would print as 124.5 where /v1 serves 124.6. Text for people to read is
  // formatted in the one presentation module, forecast/report.ts.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/forecast/report.ts', 'src/core/units.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='toFixed']",
          message:
            'values are rounded by core/units.ts (round1, round3, toTenths), text by forecast/report.ts',
        },
        {
          selector: 'Literal[value=/gCO2/], TemplateElement[value.raw=/gCO2/]',
          message: 'units are spelled once, in core/units.ts (UNIT)',
        },
      ],
    },
  },
  // No source file over 900 lines (issue 39): past that a file holds several things to split
  // apart (models.ts held features, fifteen models and the linear algebra). A table, data rather
  // than logic, may go in this block's ignores.
  {
    files: ['src/**/*.ts', 'bench/**/*.ts', 'web/src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 900, skipBlankLines: false, skipComments: false }] },
  },
  // The layers, as docs/architecture.md draws them: each rule names what a layer may not reach.
  {
    files: ['src/core/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|node:(crypto|net)$)',
              message: 'the core is pure: it imports only the core (docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  {
    // Every folder of the core, webhooks/ included. node:crypto (HMAC signatures) and node:net
    // (address parsing, BlockList) compute; neither opens a socket or reads a file.
    files: ['src/core/*/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\.\\.?/|node:(crypto|net)$)|^\\.\\./\\.\\./',
              message: 'the core is pure: it imports only the core (docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // src/config.ts and src/sources/ (the upstreams); core/sources.ts is pure facts.
              regex: '^(\\.\\./)+(config|sources(/.*)?)(\\.js)?$',
              message:
                'storage never reads the configuration or an upstream (docs/architecture.md)',
            },
            {
              regex: '^(\\.\\./)+(read|ingest|forecast|consumption)/',
              message:
                'storage sits under the layers that read and write through it (docs/architecture.md)',
            },
            SERVING_LAYERS,
          ],
        },
      ],
    },
  },
  {
    // The data layers under the serving ones; src/core/ and src/storage/ have stricter rules.
    files: [
      'src/read/**/*.ts',
      'src/forecast/**/*.ts',
      'src/ingest/**/*.ts',
      'src/consumption/**/*.ts',
      'src/config.ts',
      'src/redact.ts',
      'src/open-store.ts',
    ],
    ignores: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [SERVING_LAYERS] }] },
  },
  {
    // An upstream's adapter fetches and parses, and its fake answers as it would: neither
    // reads the configuration, stores or serves.
    files: ['src/sources/**/*.ts', 'src/simulator/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(config(\\.js)?$|(storage|read|ingest|forecast|consumption)/)',
              message:
                'an upstream adapter or its fake imports only the core and its own folder ' +
                '(docs/architecture.md)',
            },
            SERVING_LAYERS,
          ],
        },
      ],
    },
  },
  {
    files: ['src/http/**/*.ts'],
    ignores: ['src/http/app.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Webhook subscriptions are written through their own port, not read as data.
              regex: '(^|/)storage/(?!webhook-store\\.js$)',
              message:
                'routes and shims read through read/ (Reads), never the store (docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/queries/**/*.ts', 'src/webhooks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)http/|^fastify',
              message:
                'use cases and webhook delivery sit below HTTP: they never import it (docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/stream/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(storage|http)/|^fastify',
              message:
                'the stream engine reads through read/ (Reads) and leaves HTTP to its route ' +
                '(docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  // The dashboard runs in the browser, not in Node.
  { files: ['web/src/**/*.ts'], languageOptions: { globals: { ...globals.browser } } },
);
