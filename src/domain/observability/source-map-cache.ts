// Parsed source maps, cached per worker under a memory bound (issue 3: 100k events across 50
// releases' maps in under 300 MB). Maps are keyed by content hash, so a re-upload is a new entry;
// loads of the same map in flight are shared. Eviction is least-recently-used by measured cost:
// a load is charged an estimate while in flight, then what the parsed map really holds.
import { CompactMap } from './compact-map.ts';

export type MapEntry = CompactMap | 'malformed';

interface Slot {
  value: Promise<MapEntry>;
  cost: number;
  /** Set on a failed load: until then the failure is answered at once, not retried per frame. */
  failedUntil?: number;
}

// Measured on esbuild maps: a CompactMap holds ~2× its JSON once its source is in use.
const estimateFactor = 2.5;

export class SourceMapCache {
  readonly maxCost: number;
  private readonly slots = new Map<string, Slot>();
  private used = 0;
  private readonly failureTtlMs: number;
  private readonly now: () => number;

  constructor(maxBytes = 32 * 1024 * 1024, failureTtlMs = 5000, now: () => number = Date.now) {
    this.maxCost = maxBytes;
    this.failureTtlMs = failureTtlMs;
    this.now = now;
  }

  get size(): number {
    return this.slots.size;
  }

  get usedBytes(): number {
    return this.used;
  }

  /** The map with this content hash, loading its JSON with `load` on a miss. */
  get(sha256: string, sizeBytes: number, load: () => Promise<string>): Promise<MapEntry> {
    const hit = this.slots.get(sha256);
    if (hit?.failedUntil !== undefined && hit.failedUntil <= this.now()) this.forget(sha256);
    else if (hit) {
      this.slots.delete(sha256);
      this.slots.set(sha256, hit);
      return hit.value;
    }
    const slot: Slot = { value: undefined as unknown as Promise<MapEntry>, cost: sizeBytes * estimateFactor };
    slot.value = load().then(
      (json) => {
        const entry = parseMap(json);
        if (this.slots.get(sha256) === slot) this.charge(slot, entry === 'malformed' ? 64 : entry.bytes, sha256);
        return entry;
      },
      (err: unknown) => {
        // A store failure is not a malformed map: remember it briefly (an outage costs one request
        // per map every few seconds, not one per frame), then try again.
        if (this.slots.get(sha256) === slot) {
          this.forget(sha256);
          const failed = Promise.reject(err);
          failed.catch(() => undefined);
          this.slots.set(sha256, { value: failed, cost: 0, failedUntil: this.now() + this.failureTtlMs });
        }
        throw err;
      },
    );
    this.slots.set(sha256, slot);
    this.used += slot.cost;
    this.evict(sha256);
    return slot.value;
  }

  private charge(slot: Slot, cost: number, key: string): void {
    this.used += cost - slot.cost;
    slot.cost = cost;
    this.evict(key);
  }

  private forget(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    this.used -= slot.cost;
  }

  private evict(keep: string): void {
    for (const key of this.slots.keys()) {
      if (this.used <= this.maxCost) return;
      if (key !== keep) this.forget(key);
    }
  }
}

export function parseMap(json: string): MapEntry {
  try {
    return new CompactMap(json);
  } catch {
    return 'malformed';
  }
}
