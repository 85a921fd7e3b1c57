// `node --import ./src/telemetry/preload.ts src/start.ts` (npm start): tracing, when wanted, starts
// before start.ts's own imports load, which a call inside it would come too late for.
import { startTracingIfWanted } from './index.ts';

await startTracingIfWanted();
