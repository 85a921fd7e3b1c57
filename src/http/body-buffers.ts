// Buffers for large request bodies, reused from one request to the next. A 20 MiB body read into
// a fresh buffer lives outside the V8 heap and is freed only when a full GC finds it dead, which
// V8 starts for external memory only every 64 MB or so (its soft limit): bodies read one after
// another piled up three deep (60 MB) before the first was freed, and glibc then kept the pages
// (measured with bench/fairness.ts). The process reads large bodies one budget at a time
// (body-budget.ts), so a pool of at most that many bytes serves them all.
//
// A lent buffer is written by the next request as soon as it is given back, so whatever still
// points into it must stop reading first: a lease is `open` until then, and the items split from
// it refuse to parse after (json-items.ts).

/** Bodies smaller than this get a buffer of their own (the pool is for the large ones). */
const pooledFrom = 1024 * 1024;

/**
 * Pooled buffers are made in whole steps of this, so that bodies of nearly the same size share
 * one. The unused tail costs no memory: pages never written are never resident.
 */
const step = 4 * 1024 * 1024;

export interface BodyLease {
  /** Exactly `length` bytes, this lease's alone until `giveBack`. */
  readonly buffer: Buffer;
  readonly open: boolean;
  giveBack(): void;
}

export class BodyBuffers {
  private readonly spares: Buffer[] = [];
  private readonly capacity: number;

  /** `capacity`: the most bytes kept spare. */
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  lend(length: number): BodyLease {
    const pooled = length >= pooledFrom;
    let whole: Buffer | undefined;
    if (pooled) {
      // The smallest spare that fits and is not more than twice the size (a 1 MiB body must not
      // hold a 20 MiB buffer away from the next large one).
      let best = -1;
      this.spares.forEach((s, i) => {
        if (s.length >= length && s.length <= 2 * length && (best < 0 || s.length < this.spares[best]!.length))
          best = i;
      });
      if (best >= 0) whole = this.spares.splice(best, 1)[0];
    }
    whole ??= Buffer.allocUnsafe(pooled ? Math.ceil(length / step) * step : length);
    let open = true;
    return {
      buffer: whole.subarray(0, length),
      get open() {
        return open;
      },
      giveBack: () => {
        if (!open) return;
        open = false;
        if (pooled) this.keep(whole);
      },
    };
  }

  /** Kept spare while the spares stay within capacity, the longest unused first to go. */
  private keep(buffer: Buffer): void {
    this.spares.push(buffer);
    let total = this.spareBytes;
    while (total > this.capacity) total -= this.spares.shift()!.length;
  }

  /** Bytes held spare. */
  get spareBytes(): number {
    return this.spares.reduce((n, s) => n + s.length, 0);
  }
}
