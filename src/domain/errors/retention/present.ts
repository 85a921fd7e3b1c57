// An environment's error settings, retention and backpressure, as the API shows them
// (contract/errors.ts).
import type { ErrorSettingsResource } from '../../../contract/errors.ts';

export const errorSettingsView = (
  envName: string,
  s: { retention_days: number; max_pending: number; update_time: Date | null },
): ErrorSettingsResource => ({
  name: `${envName}/error_settings`,
  retention_days: s.retention_days,
  max_pending: s.max_pending,
  ...(s.update_time ? { update_time: new Date(s.update_time).toISOString() } : {}),
});
