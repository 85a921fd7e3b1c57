// Progress of a long operation on stderr (stdout stays clean for --json): on a terminal, one line
// redrawn in place with a bar, the bytes and the rate; on a pipe, in a log or with --json, plain
// lines: one per 10 % when the total is known, else one every 5 seconds.
export const mib = (n: number | null | undefined): string =>
  n === null || n === undefined ? '?' : `${(n / 2 ** 20).toFixed(1)} MiB`;

export interface ProgressOptions {
  /** Plain lines even on a terminal (--json). */
  plain?: boolean;
  /** Milliseconds, for tests; performance.now by default. */
  now?: () => number;
}

export function progressBar(
  label: string,
  out: Pick<NodeJS.WriteStream, 'write' | 'isTTY'> = process.stderr,
  options: ProgressOptions = {},
): (done: number, total: number | undefined) => void {
  const now = options.now ?? (() => performance.now());
  const started = now();
  let lastTenth = -1;
  let lastLine = -Infinity;
  return (done, total) => {
    const seconds = (now() - started) / 1000;
    const rate = seconds >= 1 ? ` at ${mib(done / seconds)}/s` : '';
    const pct = total ? Math.min(100, Math.floor((done / total) * 100)) : undefined;
    const figures = `${mib(done)}${total ? ` / ${mib(total)}` : ''}${rate}`;
    if (out.isTTY && !options.plain) {
      const width = 30;
      const filled = pct === undefined ? 0 : Math.round((pct / 100) * width);
      out.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${pct ?? '?'}% ${figures}   `);
      if (pct === 100) out.write('\n');
    } else if (pct !== undefined) {
      const tenth = Math.floor(pct / 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        out.write(`${label}: ${pct}% (${figures})\n`);
      }
    } else if (now() - lastLine >= 5000) {
      lastLine = now();
      out.write(`${label}: ${figures}\n`);
    }
  };
}
