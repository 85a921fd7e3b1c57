// Queue name → handler. The worker refuses to start unless this covers the registry exactly.
import type { AppRegistry } from '../src/jobs.ts';
import type { Handlers } from '../src/worker.ts';
import { identityBreachedImport } from './identity-breached-import.ts';
import { identityPasswordReset } from './identity-password-reset.ts';
import { identityPrune } from './identity-prune.ts';
import { identitySignUp } from './identity-sign-up.ts';
import { systemPing } from './system-ping.ts';

export const handlers: Handlers<AppRegistry> = {
  'system.ping': systemPing,
  'identity.sign-up': identitySignUp,
  'identity.password-reset': identityPasswordReset,
  'identity.breached-import': identityBreachedImport,
  'identity.prune': identityPrune,
};
