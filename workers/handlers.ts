// Queue name → handler. The worker refuses to start unless this covers the registry exactly.
import type { AppRegistry } from '../src/jobs.ts';
import type { Handlers } from '../src/worker.ts';
import { systemPing } from './system-ping.ts';

export const handlers: Handlers<AppRegistry> = {
  'system.ping': systemPing,
};
