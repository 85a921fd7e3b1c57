// A worker process's copy of its environments' enabled rules, read again once it is a second old:
// a busy environment's batches (several a second per worker) would otherwise each read the same
// rules. A rule's change (created, edited, disabled, deleted) therefore applies to the events a
// worker stores from at most about a second after it committed, plus the batch's own time
// (docs/api.md "Alerts": within 2 seconds), as Sentry's rule changes also apply within seconds.
import type { SqlTx } from '../../../db.ts';
import { enabledRules } from './queries.ts';
import type { RuleRow } from './rules.ts';

/** How long a read of an environment's rules is used. */
export const rulesFreshMs = 1000;

/** Environments kept before stale entries are dropped (a worker serving many environments). */
const keptEnvs = 10_000;

interface Kept {
  at: number;
  rules: RuleRow[];
}

export class RuleCache {
  private readonly kept = new Map<string, Kept>();
  private readonly freshMs: number;

  constructor(freshMs = rulesFreshMs) {
    this.freshMs = freshMs;
  }

  /** The enabled rules of these environments; those not read within `freshMs` are read on `tx`. */
  async rulesOf(tx: SqlTx, envIds: readonly string[]): Promise<RuleRow[]> {
    const now = performance.now();
    const stale = envIds.filter((id) => {
      const k = this.kept.get(id);
      return !k || now - k.at >= this.freshMs;
    });
    if (stale.length > 0) {
      const rows = await enabledRules(tx, stale);
      if (this.kept.size + stale.length > keptEnvs) this.drop(now);
      const read = new Map(stale.map((id) => [id, { at: now, rules: [] as RuleRow[] }]));
      for (const r of rows) read.get(r.env_id)?.rules.push(r);
      for (const [id, k] of read) this.kept.set(id, k);
    }
    return envIds.flatMap((id) => this.kept.get(id)?.rules ?? []);
  }

  private drop(now: number): void {
    for (const [id, k] of this.kept) if (now - k.at >= this.freshMs) this.kept.delete(id);
  }
}
