// Procfile `web`.
import { loadConfigOrExit } from './config.ts';
import { createLogger } from './log.ts';
import { startWeb } from './server.ts';
import { onShutdown } from './shutdown.ts';

const config = loadConfigOrExit();
const log = createLogger({ name: 'web', level: config.LOG_LEVEL });
const started = startWeb(config, { log });
// Before the first await: a SIGTERM during start-up (a deploy, a restart) still stops cleanly.
onShutdown(log, async () => (await started).stop());
await started;
