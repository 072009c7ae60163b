import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
              regex: '^(?!\\./)',
              message: 'the core is pure: it imports only the core (docs/architecture.md)',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/forecast/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\.\\.?/)|^\\.\\./\\.\\./',
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
