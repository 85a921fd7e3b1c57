// Procfile `web`.
import { loadConfigOrExit } from './config.ts';
import { createLogger } from './log.ts';
import { startWeb } from './server.ts';
import { onShutdown } from './shutdown.ts';

const config = loadConfigOrExit();
const log = createLogger({ name: 'web', level: config.LOG_LEVEL });
const web = await startWeb(config, { log });
onShutdown(log, () => web.stop());
