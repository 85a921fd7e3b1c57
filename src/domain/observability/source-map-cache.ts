// Parsed source maps, cached per worker under a memory bound (issue 3: 100k events across 50
// releases' maps in under 300 MB). Maps are keyed by content hash, so a re-upload is a new entry;
// loads of the same map in flight are shared. Eviction is least-recently-used by estimated cost.
import { TraceMap, sourceContentFor } from '@jridgewell/trace-mapping';
import { functionScopes, type Scope } from './scopes.ts';

export interface LoadedMap {
  map: TraceMap;
  /** Per source: its lines and function scopes, computed on first use. */
  sources: Map<string, OriginalSource | null>;
}

export interface OriginalSource {
  lines: string[];
  /** Offset of each line's first character, for scope lookups. */
  lineStarts: number[];
  scopes: Scope[];
}

export type MapEntry = LoadedMap | 'malformed';

interface Slot {
  value: Promise<MapEntry>;
  cost: number;
  /** Set on a failed load: until then the failure is answered at once, not retried per frame. */
  failedUntil?: number;
}

// Parsed, a map takes ~7.7× its JSON's size on the heap (decoded mappings, source lines, scopes;
// measured on a 1.1 MB esbuild map), so each map is charged 8× its size.
const costFactor = 8;

export class SourceMapCache {
  readonly maxCost: number;
  private readonly slots = new Map<string, Slot>();
  private used = 0;

  private readonly failureTtlMs: number;

  constructor(maxBytes = 160 * 1024 * 1024, failureTtlMs = 5000) {
    this.maxCost = maxBytes;
    this.failureTtlMs = failureTtlMs;
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
    if (hit?.failedUntil !== undefined && hit.failedUntil <= Date.now()) this.forget(sha256);
    else if (hit) {
      this.slots.delete(sha256);
      this.slots.set(sha256, hit);
      return hit.value;
    }
    const cost = sizeBytes * costFactor;
    const value = load().then(parseMap, (err: unknown) => {
      // A store failure is not a malformed map: remember it briefly (an outage costs one request
      // per map every few seconds, not one per frame), then try again.
      this.forget(sha256);
      const failed = Promise.reject(err);
      failed.catch(() => undefined);
      this.slots.set(sha256, { value: failed, cost: 0, failedUntil: Date.now() + this.failureTtlMs });
      throw err;
    });
    this.slots.set(sha256, { value, cost });
    this.used += cost;
    this.evict(sha256);
    return value;
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
    const map = new TraceMap(json);
    return { map, sources: new Map() };
  } catch {
    return 'malformed';
  }
}

export function sourceOf(loaded: LoadedMap, source: string): OriginalSource | null {
  let entry = loaded.sources.get(source);
  if (entry === undefined) {
    const text = sourceContentFor(loaded.map, source);
    if (text === null) {
      entry = null;
    } else {
      const lines = text.split('\n');
      const lineStarts: number[] = [];
      let at = 0;
      for (const line of lines) {
        lineStarts.push(at);
        at += line.length + 1;
      }
      entry = { lines: lines.map((l) => l.replace(/\r$/, '')), lineStarts, scopes: functionScopes(text) };
    }
    loaded.sources.set(source, entry);
  }
  return entry;
}
