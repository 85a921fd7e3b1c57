// Stacks the worker has made ready before. The same stack recurs in event after event of one bug:
// it is made once per policy and mapping, down to its deflated bytes, its grouping keys and its
// scrubbed frame lines, so an event pays to parse, scrub and compress only what is its own (its
// message lines, tags, breadcrumbs). Measured in bench/errors.ts: 0.29 ms of worker CPU per event
// against 0.73 when every frame was mapped, scrubbed and compressed for every event. Stacks, not
// frames, are kept: a frame memo as well held the worker's peak memory over its 300 MB bound with
// 50 releases' maps, and the policy's string memo (scrub.ts) already serves frames that stacks share.
// One per worker, passed in with the pipeline's other caches (caches.ts); nothing is module state.
import type { ScrubCounts } from '../scrubbing/scrub.ts';
import type { StackKeys } from './fingerprint.ts';
import type { MapRef, StackFrame } from './symbolicate.ts';

/** What grouping and the worker look at in a processed frame. */
export type KeyFrame = Pick<StackFrame, 'function' | 'file' | 'in_app' | 'unmapped_reason'>;

/** A stack's frames ready to store: grouping's view, and the body's deflated segment (event-codec.ts). */
export interface ReadyStack {
  frames: KeyFrame[];
  keys: StackKeys;
  segment: Buffer;
  /** The stack text's frame lines, scrubbed (when the event has a stack). */
  frameLines?: string;
}

/** A kept stack, with what scrubbing it counted: an event that reuses it counts the same. */
export interface KeptStack {
  stack: ReadyStack;
  counts: ScrubCounts;
}

// 12 MiB hold ~1,300 distinct 30-frame stacks (~9 KB each), more than twice the benchmark's 500.
const defaultMaxBytes = 12 * 1024 * 1024;

// A substring can keep its whole parent alive (V8 slices share it): a key made of an event's frame
// lines would pin that event's whole stack text. Kept keys are copies.
const detached = (s: string): string => (s.length < 13 ? s : ` ${s}`.slice(1));

// Strings count once a byte; a frame's small object and the entry itself about 160 bytes.
const weigh = (key: string, v: ReadyStack): number =>
  v.segment.length +
  key.length +
  (v.frameLines?.length ?? 0) +
  v.keys.inAppJson.length +
  v.keys.allJson.length +
  160 * (v.frames.length + 1);

export class StackCache {
  private readonly entries = new Map<string, KeptStack & { bytes: number }>();
  private readonly mappings = new WeakMap<readonly MapRef[], string>();
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(maxBytes = defaultMaxBytes) {
    this.maxBytes = maxBytes;
  }

  /** What decides how a release's frames map: which maps it has, and for which files. */
  mappingOf(maps: readonly MapRef[]): string {
    let id = this.mappings.get(maps);
    if (id === undefined) {
      id = JSON.stringify(maps.map((m) => [m.sha256, m.file, m.file_path, m.minified?.sha256 ?? null]));
      this.mappings.set(maps, id);
    }
    return id;
  }

  get(key: string): KeptStack | undefined {
    return this.entries.get(key);
  }

  set(key: string, stack: ReadyStack, counts: ScrubCounts): void {
    const bytes = weigh(key, stack);
    // Over the bound, the oldest quarter goes (a Map iterates in insertion order): clearing all at
    // once would make every event after it a miss at the same time.
    if (this.bytes + bytes > this.maxBytes) {
      for (const [k, v] of this.entries) {
        if (this.bytes + bytes <= this.maxBytes * 0.75) break;
        this.entries.delete(k);
        this.bytes -= v.bytes;
      }
    }
    const old = this.entries.get(key);
    if (old) this.bytes -= old.bytes;
    this.entries.set(detached(key), { stack, counts, bytes });
    this.bytes += bytes;
  }
}
