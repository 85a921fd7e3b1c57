// How the console's pages write times, counts and sizes: the same everywhere, in English, UTC.
import { html, type Html } from '../html/html.ts';

/** A time to the minute, UTC (a `<time>` element's text; its `datetime` has the instant). */
export const when = (d: Date): string => d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

/** A `<time>` element (machine-readable instant, text as `when`); `never` for no time. */
export const timeTag = (d: Date | null): Html =>
  d ? html`<time datetime="${d.toISOString()}">${when(d)}</time>` : html`<span class="muted">never</span>`;

export const plural = (n: number, one: string): string => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

/** A size in bytes, in IEC units (KiB = 1024 B) as `cairn backups` prints them. */
export function bytes(n: number | null): string {
  if (n === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
