// Lint rules: typescript-eslint's recommended set (`any` and lint escapes are not allowed), the
// layers' import directions (docs/architecture.md), and the size limits of docs/conventions.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const surfaces = ['src/api', 'src/portal', 'src/console'];
const above = ['src/app', ...surfaces, 'workers', 'src/cli', 'src/start.ts', 'src/web.ts', 'src/worker.ts'];
const base = ['src/config.ts', 'src/db.ts', 'src/app-error.ts', 'src/ids.ts', 'src/crypto.ts', 'src/log.ts'];

/** `from` may not be imported by `target`, with the reason ESLint prints. */
const zone = (target, from, message) => ({ target, from, message });

// Each zone is one arrow that must never exist; see docs/architecture.md for the picture.
const zones = [
  zone(
    'src/contract',
    ['src/domain', 'src/http', 'src/jobs', 'src/storage', ...base, ...above],
    'the contract is the bottom: it imports only zod',
  ),
  zone('src/http', ['src/domain', ...above], 'the route kernel is transport only: it knows no feature'),
  zone('src/domain', ['src/http', ...above], 'the domain knows no transport, route, surface, worker or CLI'),
  zone('src/jobs', ['src/domain', 'src/http', ...above], 'the queue runtime sits below the features'),
  zone(base, ['src/domain', 'src/http', 'src/jobs', ...above], 'base knows no feature'),
  zone(
    ['src/egress', 'src/storage', 'src/mail', 'src/html'],
    ['src/domain', 'src/http', ...above],
    'shared services know no feature and no surface',
  ),
  zone(
    'src/api',
    ['src/portal', 'src/console', 'workers'],
    'surfaces meet only in the app composition; a web never loads worker code',
  ),
  zone('src/portal', ['src/api', 'src/console', 'workers'], 'surfaces meet only in the app composition'),
  zone('src/console', ['src/api', 'src/portal', 'workers'], 'surfaces meet only in the app composition'),
  zone(
    'src/sdk',
    ['src/domain', 'src/http', 'src/jobs', 'src/storage', ...base, ...above],
    'the SDK is a client: it knows only HTTP and the contract',
  ),
];

export default tseslint.config(
  // The corpus scenarios are plain scripts run as they are in old engines (Hermes 0.12, JSC's shell).
  { ignores: ['node_modules', '.data', 'coverage', 'test-results', 'test/errors/corpus/capture/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
      },
    },
    linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Layers and sizes hold for the service's own code; tests, benches and scripts may reach anywhere.
  {
    files: ['src/**/*.ts', 'workers/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones }],
      // A circle of value imports makes load order matter; `import type` circles are erased.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  // A CLI command file is a table of commander declarations: one builder per command is its shape.
  { files: ['src/cli/commands/**/*.ts'], rules: { 'max-lines-per-function': 'off' } },
  // Applications the tests bundle for a real browser (test/errors/sentry/browser-sdk.test.ts).
  {
    files: ['test/**/fixtures/browser-*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly' } },
  },
);
