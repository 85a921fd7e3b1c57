// Lint rules: typescript-eslint's recommended set; `any` and lint escapes are not allowed (docs/conventions.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  // Applications the tests bundle for a real browser (test/errors/sentry/browser-sdk.test.ts).
  {
    files: ['test/**/fixtures/browser-*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly' } },
  },
);
