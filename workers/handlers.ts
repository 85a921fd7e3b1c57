// Queue name → handler. The worker refuses to start unless this covers the registry exactly.
import { longStatements } from '../src/db-timeouts.ts';
import type { AppRegistry } from '../src/queues.ts';
import type { Handlers, JobHandler } from '../src/worker.ts';
import type { z } from 'zod';
import { alertsPrune } from './alerts-prune.ts';
import { alertsSend } from './alerts-send.ts';
import { backupsCapture } from './backups-capture.ts';
import { backupsDrill } from './backups-drill.ts';
import { backupsDrillsDue } from './backups-drills-due.ts';
import { backupsPrune } from './backups-prune.ts';
import { backupsReap } from './backups-reap.ts';
import { backupsRestore } from './backups-restore.ts';
import { backupsSchedule } from './backups-schedule.ts';
import { errorsAssembleBundle } from './errors-assemble-bundle.ts';
import { errorsBackfillFacets } from './errors-backfill-facets.ts';
import { errorsIngest } from './errors-ingest.ts';
import { errorsPrune } from './errors-prune.ts';
import { errorsReconcilePending } from './errors-reconcile-pending.ts';
import { errorsVacuum } from './errors-vacuum.ts';
import { identityBreachedImport } from './identity-breached-import.ts';
import { identityPasswordReset } from './identity-password-reset.ts';
import { identityPrune } from './identity-prune.ts';
import { identitySignUp } from './identity-sign-up.ts';
import { mailPrune } from './mail-prune.ts';
import { webhooksDeliver } from './webhooks-deliver.ts';
import { webhooksPrune } from './webhooks-prune.ts';
import { webhooksSweep } from './webhooks-sweep.ts';

/**
 * Maintenance that may legitimately run one statement for minutes (a prune's delete of a day's
 * rows, a VACUUM, an import): its statements get the long bound (src/db-timeouts.ts), not the
 * worker's 10 s, which is for a job's ordinary statements.
 */
function long<S extends z.ZodType>(handler: JobHandler<S, AppRegistry>): JobHandler<S, AppRegistry> {
  return (jobs, ctx, tx) => longStatements(() => handler(jobs, ctx, tx));
}

// Both lanes of webhook attempts run the same handler, with one sender and its sockets; each knows
// its lane (an attempt found in the other lane than its endpoint's is queued in its own).
const deliver = webhooksDeliver();

export const handlers: Handlers<AppRegistry> = {
  'errors.ingest': errorsIngest(),
  'errors.assemble-bundle': errorsAssembleBundle,
  'errors.prune': long(errorsPrune),
  'errors.backfill-facets': errorsBackfillFacets,
  'errors.vacuum': long(errorsVacuum),
  'errors.reconcile-pending': long(errorsReconcilePending),
  'identity.sign-up': identitySignUp,
  'identity.password-reset': identityPasswordReset,
  'identity.breached-import': long(identityBreachedImport),
  'identity.prune': long(identityPrune),
  'mail.prune': long(mailPrune),
  'backups.capture': backupsCapture,
  'backups.restore': backupsRestore,
  'backups.schedule': backupsSchedule,
  'backups.prune': long(backupsPrune),
  'backups.reap': backupsReap,
  'backups.drill': backupsDrill,
  'backups.drills-due': backupsDrillsDue,
  'webhooks.deliver': deliver('webhooks.deliver'),
  'webhooks.deliver-slow': deliver('webhooks.deliver-slow'),
  'webhooks.prune': long(webhooksPrune),
  'webhooks.sweep': long(webhooksSweep),
  'alerts.send': alertsSend(),
  'alerts.prune': long(alertsPrune),
};
