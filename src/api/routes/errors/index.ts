// Error tracking routes.
import { batchCapture, capture } from './capture.ts';
import { clientKeyRoutes } from './client-keys.ts';
import { eventRoutes } from './events.ts';
import { groupRoutes } from './groups.ts';
import { minifiedSourceRoutes } from './minified-sources.ts';
import { scrubbingRoutes } from './scrubbing.ts';
import { errorSettingsRoutes } from './settings.ts';
import { sourceMapRoutes } from './source-maps.ts';

export const errorGroupRoutes = [
  capture,
  batchCapture,
  ...groupRoutes,
  ...eventRoutes,
  ...sourceMapRoutes,
  ...minifiedSourceRoutes,
  ...scrubbingRoutes,
  ...errorSettingsRoutes,
  ...clientKeyRoutes,
];
