// How many bytes of large request bodies a web process holds at once. A 20 MiB batchCapture costs
// its bytes and the events parsed from them; two or three at once took a web process past 500 MB
// (Heroku's standard dyno has 512 MB). Bodies wait their turn, first come first served, before
// they are read: an unread body waits in the socket, at the client's cost. A body larger than the
// whole budget takes all of it, alone.
import { AppError } from '../app-error.ts';

interface Waiter {
  bytes: number;
  grant: () => void;
}

export class BodyBudget {
  private free: number;
  readonly capacity: number;
  private readonly waiting: Waiter[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
    this.free = capacity;
  }

  /** Holds `bytes` until the returned release is called; refuses with 429 after `timeoutMs` in line. */
  async take(bytes: number, timeoutMs: number): Promise<() => void> {
    const need = Math.min(bytes, this.capacity);
    if (this.waiting.length === 0 && need <= this.free) {
      this.free -= need;
      return this.releaser(need);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes: need,
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser(need));
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        this.grantWaiting();
        reject(
          new AppError('rate_limited', 'this web process is busy reading other large batches; retry shortly', {
            retryAfter: 1,
          }),
        );
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  private releaser(bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free += bytes;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.bytes <= this.free) {
      const next = this.waiting.shift()!;
      this.free -= next.bytes;
      next.grant();
    }
  }
}

/** The process's budget: one 20 MiB batch, or many smaller ones, at a time. */
export const largeBodies = new BodyBudget(24 * 1024 * 1024);
