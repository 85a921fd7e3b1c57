// sentry-cli's `artifactbundle/assemble` call, as the domain answers it: a bundle already known is
// answered by its state (sentry-cli polls until `ok` or `error`); one with chunks still missing
// names them; otherwise its assembly row and its `errors.assemble-bundle` job are written in one
// transaction (docs/conventions.md "Writes and jobs"), so a crash leaves neither or both.
import type { Knex } from 'knex';
import type { ErrorJobs } from '../../queues.ts';
import { bundleQueries } from './queries.ts';

export interface AssemblyRequest {
  checksum: string;
  chunks: string[];
  version?: string | undefined;
  dist?: string | undefined;
}

export interface AssemblyAnswer {
  state: 'not_found' | 'error' | 'created' | 'ok';
  missingChunks: string[];
  detail: string | null;
}

export async function requestAssembly(
  deps: { db: Knex; jobs: Pick<ErrorJobs, 'enqueue'> },
  envId: string,
  body: AssemblyRequest,
): Promise<AssemblyAnswer> {
  const q = bundleQueries(deps.db);
  const known = await q.assembly(envId, body.checksum);
  // Known and not failed, or failed within the hold: its state is the answer (sentry-cli polls
  // this until `ok` or `error`, and prints an error's detail).
  if (known && (known.state !== 'error' || known.error_held))
    return { state: known.state, missingChunks: [], detail: known.detail };
  const missing = await q.missingChunks(envId, body.chunks);
  if (missing.length > 0) return { state: 'not_found' as const, missingChunks: missing, detail: null };
  const row = await deps.db.transaction(async (trx) => {
    const started = await bundleQueries(trx).startAssembly({
      env_id: envId,
      checksum: body.checksum,
      chunks: body.chunks,
      release: body.version ?? null,
      dist: body.dist ?? null,
    });
    // A bundle whose failure is older than the hold is tried again (its chunks may be new).
    const retry =
      !started.created &&
      started.row.state === 'error' &&
      (await bundleQueries(trx).restartAssembly(envId, body.checksum));
    if (started.created || retry)
      await deps.jobs.enqueue(trx, 'errors.assemble-bundle', { env_id: envId, checksum: body.checksum });
    return retry ? { ...started.row, state: 'created' as const, detail: null } : started.row;
  });
  return { state: row.state, missingChunks: [], detail: row.detail };
}
