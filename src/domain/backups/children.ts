// Reading a child's output: Node resumes every stdio stream nobody reads when the child exits,
// dropping what it held (lib/internal/child_process.js, flushStdio; nodejs/node#5034 spared only
// streams with a 'readable' listener). A small database dumps and compresses before the worker's
// first S3 request returns, so the first backup of a fresh worker came out empty. Every pipe we
// read from a child is therefore taken into a stream of ours the moment the child starts.
import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The child's exit, listened for at once so that an early exit is never missed. */
export function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

/** The last few KB of a child's stderr, for the error message. */
export function stderrTail(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (d: Buffer) => {
    text = (text + d.toString('utf8')).slice(-4000);
  });
  return () => text.trim();
}

/** A child's stdout, already being read into a stream of ours (see the top of this file). */
export function heldOutput(child: ChildProcess, highWaterMark = 1024 * 1024): Readable {
  const out = new PassThrough({ highWaterMark });
  child.stdout!.on('error', (err) => out.destroy(err));
  child.stdout!.pipe(out);
  return out;
}

export const describe = (e: Exit): string => e.signal ?? `exit ${e.code}`;
