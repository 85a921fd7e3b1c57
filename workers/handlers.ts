// Queue name → handler. The worker refuses to start unless this covers the registry exactly.
import type { AppRegistry } from '../src/jobs.ts';
import type { Handlers } from '../src/worker.ts';
import { backupsCapture } from './backups-capture.ts';
import { backupsDrill } from './backups-drill.ts';
import { backupsDrillsDue } from './backups-drills-due.ts';
import { backupsPrune } from './backups-prune.ts';
import { backupsReap } from './backups-reap.ts';
import { backupsRestore } from './backups-restore.ts';
import { backupsSchedule } from './backups-schedule.ts';
import { errorsAssembleBundle } from './errors-assemble-bundle.ts';
import { errorsIngest } from './errors-ingest.ts';
import { errorsPrune } from './errors-prune.ts';
import { errorsVacuum } from './errors-vacuum.ts';
import { identityBreachedImport } from './identity-breached-import.ts';
import { identityPasswordReset } from './identity-password-reset.ts';
import { identityPrune } from './identity-prune.ts';
import { identitySignUp } from './identity-sign-up.ts';
import { mailPrune } from './mail-prune.ts';
import { webhooksDeliver } from './webhooks-deliver.ts';
import { webhooksPrune } from './webhooks-prune.ts';
import { webhooksSweep } from './webhooks-sweep.ts';

// Both lanes of webhook attempts run the same handler, with one sender and its sockets.
const deliver = webhooksDeliver();

export const handlers: Handlers<AppRegistry> = {
  'errors.ingest': errorsIngest(),
  'errors.assemble-bundle': errorsAssembleBundle,
  'errors.prune': errorsPrune,
  'errors.vacuum': errorsVacuum,
  'identity.sign-up': identitySignUp,
  'identity.password-reset': identityPasswordReset,
  'identity.breached-import': identityBreachedImport,
  'identity.prune': identityPrune,
  'mail.prune': mailPrune,
  'backups.capture': backupsCapture,
  'backups.restore': backupsRestore,
  'backups.schedule': backupsSchedule,
  'backups.prune': backupsPrune,
  'backups.reap': backupsReap,
  'backups.drill': backupsDrill,
  'backups.drills-due': backupsDrillsDue,
  'webhooks.deliver': deliver,
  'webhooks.deliver-slow': deliver,
  'webhooks.prune': webhooksPrune,
  'webhooks.sweep': webhooksSweep,
};
