import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Three tiers, each a vitest project (`npm test -- --project unit` runs one):
// - unit: pure functions. No database, no network, no child process: it needs nothing provisioned
//   and has no global setup (`npm run test:unit`).
// - db+api: the real Postgres and S3, the web and worker in the test's own process. Every file not
//   listed below is here, so a new test file gets the provisioned services unless it says otherwise.
// - e2e: child processes (the Procfile's web and worker, the CLI, kill -9, pg_dump under a killed
//   worker), browsers, built packages and deploy files.
const unit = [
  'test/api/json-items.test.ts',
  'test/api/route-paths.test.ts',
  'test/api/trace-context.test.ts',
  'test/backups/blobs-filter.test.ts',
  'test/backups/catalog-compare.test.ts',
  'test/backups/dump-check.test.ts',
  'test/backups/format.test.ts',
  'test/backups/progress.test.ts',
  'test/backups/role-filter.test.ts',
  'test/console/chart.test.ts',
  'test/crypto.test.ts',
  'test/errors/compact-map.test.ts',
  'test/errors/deflate.test.ts',
  'test/errors/minified/jquery-names.test.ts',
  'test/errors/parser.test.ts',
  'test/errors/process-memo.test.ts',
  'test/errors/scopes.test.ts',
  'test/errors/scrub-nested.test.ts',
  'test/errors/scrub-schema.test.ts',
  'test/errors/scrub.test.ts',
  'test/errors/sentry/bundle-zip.test.ts',
  'test/errors/sentry/debug-ids.test.ts',
  'test/errors/sentry/envelope.test.ts',
  'test/errors/sentry/event.test.ts',
  'test/errors/sentry/frames.test.ts',
  'test/errors/sentry/legacy-shapes.test.ts',
  'test/errors/stack/closure-names.test.ts',
  'test/errors/stack/corpus.test.ts',
  'test/errors/stack/frame-line-cost.test.ts',
  'test/errors/stack/frame-lines.test.ts',
  'test/errors/stack/multiline-corpus.test.ts',
  'test/errors/stack/multiline-cost.test.ts',
  'test/errors/stack/multiline.test.ts',
  'test/errors/stack/properties.test.ts',
  'test/errors/stack/structure.test.ts',
  'test/errors/stack/unreadable-between.test.ts',
  'test/errors/storable.test.ts',
  'test/errors/symbolicate-scopes.test.ts',
  'test/identity/pure.test.ts',
  'test/ids.test.ts',
  'test/operations/telemetry-redact.test.ts',
  'test/operations/telemetry-settings.test.ts',
  'test/runtime.test.ts',
  'test/storage/disk-driver.test.ts',
  'test/webhooks/pure.test.ts',
];

const e2e = [
  'test/api/store-unavailable.test.ts',
  'test/backups/delete.test.ts',
  'test/backups/download-link.test.ts',
  'test/backups/first-backup.test.ts',
  'test/backups/killed-restore.test.ts',
  'test/backups/killed-worker.test.ts',
  'test/backups/role-restore.test.ts',
  'test/backups/schedule-cli.test.ts',
  'test/backups/takeover.test.ts',
  'test/cli.test.ts',
  'test/console/backups.test.ts',
  'test/console/console.test.ts',
  'test/console/links.test.ts',
  'test/console/users.test.ts',
  'test/errors/big-map.test.ts',
  'test/errors/crash.test.ts',
  'test/errors/error-retention.test.ts',
  'test/errors/idempotent-capture.test.ts',
  'test/errors/sentry/browser-sdk.test.ts',
  'test/errors/sentry/node-sdk.test.ts',
  'test/errors/sentry/sdk-context.test.ts',
  'test/errors/sentry/sentry-cli.test.ts',
  'test/errors/stack/multiline-http.test.ts',
  'test/identity/lockout.test.ts',
  'test/identity/outbox-cli.test.ts',
  'test/operations/telemetry.test.ts',
  'test/packages/install.test.ts',
  'test/portal/browser.test.ts',
  'test/process/connection-budget.test.ts',
  'test/process/database-tls.test.ts',
  'test/process/deploy-files.test.ts',
  'test/process/errors.test.ts',
  'test/process/frozen-database.test.ts',
  'test/process/processes.test.ts',
  'test/process/start.test.ts',
  'test/process/web-cluster.test.ts',
  'test/security/bundle-bomb.test.ts',
  'test/security/client-address-forged.test.ts',
  'test/security/console-link-csrf.test.ts',
  'test/security/console-signin-limits.test.ts',
  'test/security/embedded-postgres-auth.test.ts',
  'test/security/envelope-memory.test.ts',
  'test/security/lockout-in-flight.test.ts',
  'test/security/lockout-race.test.ts',
  'test/security/nested-secrets.test.ts',
  'test/security/outbox-secrets.test.ts',
  'test/security/private-directory.test.ts',
  'test/security/private-targets.test.ts',
  'test/storage/cli.test.ts',
  'test/webhooks/cli.test.ts',
  'test/webhooks/killed-worker.test.ts',
  'test/webhooks/takeover.test.ts',
];

// A listed file that is gone (moved or renamed) would silently leave its tier: fail instead.
const missing = [...unit, ...e2e].filter((file) => !existsSync(new URL(file, import.meta.url)));
if (missing.length > 0) throw new Error(`vitest.config.ts lists test files that do not exist: ${missing.join(', ')}`);

export default defineConfig({
  test: {
    // Real Postgres, S3 and child processes: generous limits, but no test sleeps to pass.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: unit } },
      {
        extends: true,
        test: {
          name: 'db+api',
          include: ['test/**/*.test.ts'],
          exclude: [...unit, ...e2e],
          globalSetup: ['test/global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'e2e', include: e2e, globalSetup: ['test/global-setup.ts'] } },
    ],
  },
});
