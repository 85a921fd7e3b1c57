// The webhook events of the ingest (docs/api.md "Webhooks"): `error_group.created` for a group its
// store made, `error_group.reopened` for a resolved group a new occurrence reopened. Written on the
// store's transaction, so an event exists exactly when its group change committed; a batch of
// environments without endpoints costs one statement.
import type { Db as BossDb } from 'pg-boss';
import { errorGroupEvent } from './present.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { emit, wanted } from '../../webhooks/outbox/emit.ts';
import type { ChangedGroup } from '../intake/store-queries.ts';
import { groupsWithEnvName } from './queries.ts';

export async function emitGroupEvents(tx: BossDb, jobs: Jobs, changed: readonly ChangedGroup[]): Promise<void> {
  if (changed.length === 0) return;
  // A batch stored in parts may name a group twice: created in one part wins over reopened.
  const byId = new Map<string, ChangedGroup>();
  for (const c of changed) if (!byId.get(c.id)?.created) byId.set(c.id, c);
  const envIds = [...new Set(changed.map((c) => c.env_id))];
  if (!(await wanted(tx, envIds, ['error_group.created', 'error_group.reopened']))) return;
  const rows = await groupsWithEnvName(tx, [...byId.keys()]);
  await emit(
    tx,
    jobs,
    rows.map((g) =>
      errorGroupEvent(
        { id: g.env_id, name: g.env_name },
        byId.get(g.id)!.created ? 'error_group.created' : 'error_group.reopened',
        g,
      ),
    ),
  );
}
