// Parsed source maps, cached per worker under a memory bound (100k events across 50
// releases' maps in under 300 MB). Maps are keyed by content hash, so a re-upload is a new entry;
// loads of the same map in flight are shared. Eviction is least-recently-used by measured cost:
// a load is charged an estimate while in flight, then what the parsed map really holds.
//
// A map that holds more than the whole bound (the upload limit is 50 MiB of JSON, ~110 MB parsed,
// most of it typed arrays outside the V8 heap) would otherwise evict everything and then itself
// at the next miss, and be fetched and parsed again for every other frame of a batch that
// alternates between it and another file. It gets a slot of its own instead, outside the bound:
// one such map at a time, kept until another takes its place or it goes unused for `largeTtlMs`.
// The worst case is then the bound plus the largest map an upload accepts.
import { CompactMap } from './compact-map.ts';

export type MapEntry = CompactMap | 'malformed';

interface Slot {
  value: Promise<MapEntry>;
  cost: number;
  /** Set on a failed load: until then the failure is answered at once, not retried per frame. */
  failedUntil?: number;
}

interface Large {
  key: string;
  value: Promise<MapEntry>;
  bytes: number;
  lastUsed: number;
}

// Measured on esbuild maps: a CompactMap holds ~2× its JSON once its source is in use.
const estimateFactor = 2.5;

export class SourceMapCache {
  readonly maxCost: number;
  private readonly slots = new Map<string, Slot>();
  private used = 0;
  private large: Large | undefined;
  private readonly failureTtlMs: number;
  private readonly largeTtlMs: number;
  private readonly now: () => number;

  constructor(maxBytes = 32 * 1024 * 1024, failureTtlMs = 5000, now: () => number = Date.now, largeTtlMs = 60_000) {
    this.maxCost = maxBytes;
    this.failureTtlMs = failureTtlMs;
    this.largeTtlMs = largeTtlMs;
    this.now = now;
  }

  get size(): number {
    return this.slots.size + (this.large ? 1 : 0);
  }

  /** What the maps under the bound hold (the one oversized map is apart: `largeBytes`). */
  get usedBytes(): number {
    return this.used;
  }

  get largeBytes(): number {
    return this.large?.bytes ?? 0;
  }

  /** The map with this content hash, loading its JSON with `load` on a miss. */
  get(sha256: string, sizeBytes: number, load: () => Promise<string>): Promise<MapEntry> {
    const now = this.now();
    if (this.large && now - this.large.lastUsed > this.largeTtlMs) this.large = undefined;
    if (this.large?.key === sha256) {
      this.large.lastUsed = now;
      return this.large.value;
    }
    const hit = this.slots.get(sha256);
    if (hit?.failedUntil !== undefined && hit.failedUntil <= now) this.forget(sha256);
    else if (hit) {
      this.slots.delete(sha256);
      this.slots.set(sha256, hit);
      return hit.value;
    }
    // A load expected to outgrow the bound is not charged while in flight: it would empty the cache
    // for a map that goes to the large slot anyway.
    const estimate = sizeBytes * estimateFactor;
    const slot: Slot = {
      value: undefined as unknown as Promise<MapEntry>,
      cost: estimate > this.maxCost ? 0 : estimate,
    };
    slot.value = load().then(
      (json) => {
        const entry = parseMap(json);
        if (this.slots.get(sha256) !== slot) return entry;
        const bytes = entry === 'malformed' ? 64 : entry.bytes;
        if (bytes > this.maxCost) {
          this.forget(sha256);
          this.large = { key: sha256, value: slot.value, bytes, lastUsed: this.now() };
        } else {
          this.charge(slot, bytes, sha256);
        }
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
