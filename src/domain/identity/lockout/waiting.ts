// Checks waiting for a slot among an identifier's checks in flight, per process: they queue in
// arrival order behind one watcher, which alone asks Postgres (a plain read, then a reservation
// for the first in line once a slot looks free). A web process has a handful of connections
// (src/db.ts); a poll per waiting request would take them from the very checks being waited for,
// so a burst of a hundred sign-ins would starve its own ten. A check settled in this process wakes
// the watcher at once; one settled by another process is seen at the next look (every 25 ms at
// first, backing off to 250 ms).
import type { Db } from '../../../db.ts';
import type { AppError } from '../../../app-error.ts';

export interface SlotQueries {
  /** Reserves the check (the row locked), or answers why not. */
  reserve(checkId: string): Promise<{ reserved: boolean; lockedSeconds: number }>;
  /** A plain read: seconds locked (0 = not), and whether a slot looks free. */
  look(): Promise<{ lockedSeconds: number; free: boolean }>;
}

export interface WaitRules {
  /** When this check gives up. */
  deadline: number;
  lockedOut(seconds: number): AppError;
  busy(): AppError;
}

interface Waiter {
  checkId: string;
  rules: WaitRules;
  resolve(): void;
  reject(err: unknown): void;
}

interface Room {
  waiters: Waiter[];
  /** Ends the watcher's current pause early. */
  wake?: () => void;
  /** A check settled while the watcher was asking: its next pause is skipped. */
  poked: boolean;
}

const firstPauseMs = 25;
const longestPauseMs = 250;

// Per database handle, so two services in one process (tests) never share a queue.
const roomsByDb = new WeakMap<object, Map<string, Room>>();

function roomsOf(db: Db): Map<string, Room> {
  let rooms = roomsByDb.get(db);
  if (!rooms) roomsByDb.set(db, (rooms = new Map()));
  return rooms;
}

/**
 * Resolves once `checkId` holds a slot; rejects with `lockedOut` when the identifier is locked, or
 * `busy` past the deadline. Reserves at once when nobody in this process waits already.
 */
export async function reserveSlot(
  db: Db,
  key: string,
  checkId: string,
  q: SlotQueries,
  rules: WaitRules,
): Promise<void> {
  if (!roomsOf(db).has(key)) {
    const r = await q.reserve(checkId);
    if (r.reserved) return;
    if (r.lockedSeconds > 0) throw rules.lockedOut(r.lockedSeconds);
  }
  // Looked up again: a watcher may have started while this one asked.
  const rooms = roomsOf(db);
  return new Promise<void>((resolve, reject) => {
    const waiter = { checkId, rules, resolve, reject };
    const room = rooms.get(key);
    if (room) {
      room.waiters.push(waiter);
      return;
    }
    const created: Room = { waiters: [waiter], poked: false };
    rooms.set(key, created);
    void watch(created, q, () => {
      if (rooms.get(key) === created) rooms.delete(key);
    });
  });
}

/** A check of `key` settled in this process: its watcher looks again now. */
export function slotFreed(db: Db, key: string): void {
  const room = roomsOf(db).get(key);
  if (!room) return;
  if (room.wake) room.wake();
  else room.poked = true;
}

/**
 * The watcher: serves the room's waiters in order until none is left. `close` takes the room out
 * of the map in the same turn as the last waiter leaves, so a later check never joins a room whose
 * watcher has stopped.
 */
async function watch(room: Room, q: SlotQueries, close: () => void): Promise<void> {
  let pause = firstPauseMs;
  const dropLate = () => {
    const now = Date.now();
    const late = room.waiters.filter((w) => w.rules.deadline <= now);
    room.waiters = room.waiters.filter((w) => w.rules.deadline > now);
    for (const w of late) w.reject(w.rules.busy());
  };
  const refuseAll = (seconds: number) => {
    for (const w of room.waiters.splice(0)) w.reject(w.rules.lockedOut(seconds));
  };
  try {
    for (;;) {
      dropLate();
      const head = room.waiters[0];
      if (!head) return;
      // Only this loop removes waiters, so the head is still waiting when its answer comes.
      const r = await q.reserve(head.checkId);
      if (r.reserved) {
        room.waiters.shift();
        head.resolve();
        pause = firstPauseMs;
        continue;
      }
      if (r.lockedSeconds > 0) return refuseAll(r.lockedSeconds);
      // Watch until a slot looks free (then reserve again: another process may take it first).
      for (;;) {
        dropLate();
        if (room.waiters.length === 0) return;
        const soonest = Math.min(...room.waiters.map((w) => w.rules.deadline)) - Date.now();
        await pauseFor(room, Math.max(0, Math.min(soonest, pause * (0.5 + Math.random()))));
        pause = Math.min(pause * 1.5, longestPauseMs);
        const s = await q.look();
        if (s.lockedSeconds > 0) return refuseAll(s.lockedSeconds);
        if (s.free) break;
      }
    }
  } catch (err) {
    for (const w of room.waiters.splice(0)) w.reject(err);
  } finally {
    close();
  }
}

function pauseFor(room: Room, ms: number): Promise<void> {
  if (room.poked) {
    room.poked = false;
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      room.wake = undefined;
      resolve();
    };
    const timer = setTimeout(done, ms);
    room.wake = done;
  });
}
