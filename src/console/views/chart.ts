// The console's occurrence charts: inline SVG made on the server from per-day counts (no script,
// no image request, nothing for the CSP to allow). A chart is one image to assistive technology
// (WAI-ARIA `role="img"`), named by what it shows in words, since its bars say nothing to a screen
// reader (WCAG 2.2 §1.1.1); the large one also titles each bar for pointer users.
import { html, type Html } from '../../html/html.ts';
import { plural } from '../format.ts';

/** The span of the console's charts, in UTC days ending today. */
export const chartDays = 14;

export interface ChartSize {
  /** Bar width and gap, and the chart's height, in px. */
  bar: number;
  gap: number;
  height: number;
  /** Each bar gets a `<title>` (a tooltip) with its day and count. */
  titled: boolean;
}

export const chartSizes = {
  small: { bar: 6, gap: 2, height: 28, titled: false },
  large: { bar: 28, gap: 6, height: 96, titled: true },
} satisfies Record<string, ChartSize>;

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const svgNs = 'http://www.w3.org/2000/svg';
const dayName = (d: Date) => `${d.getUTCDate()} ${months[d.getUTCMonth()]}`;

/** The chart's accessible name: the total and the busiest day, in words. */
export function chartLabel(counts: readonly number[], days: readonly Date[]): string {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return `No events in the last ${counts.length} days`;
  const peak = counts.indexOf(Math.max(...counts));
  const most = `${dayName(days[peak]!)} (${counts[peak]!.toLocaleString('en')})`;
  return `Events per day, last ${counts.length} days: ${plural(total, 'event')}, most on ${most}`;
}

/** `counts[i]`: the events of the i-th day, the last being `lastDay`'s (UTC). */
export function occurrenceChart(counts: readonly number[], lastDay: Date, size: ChartSize): Html {
  const end = Date.UTC(lastDay.getUTCFullYear(), lastDay.getUTCMonth(), lastDay.getUTCDate());
  const days = counts.map((_, i) => new Date(end - (counts.length - 1 - i) * 86_400_000));
  const max = Math.max(1, ...counts);
  const width = counts.length * (size.bar + size.gap) - size.gap;
  const bars = counts.map((n, i) => {
    // A day without events keeps a 1 px mark, so the chart's span reads as 14 days.
    const h = n === 0 ? 1 : Math.max(2, Math.round((n / max) * size.height));
    const x = i * (size.bar + size.gap);
    const title = size.titled ? html`<title>${dayName(days[i]!)}: ${plural(n, 'event')}</title>` : '';
    const fill = n === 0 ? '#c4c9cf' : '#1d4fc4';
    const y = size.height - h;
    return html`<rect x="${x}" y="${y}" width="${size.bar}" height="${h}" rx="1" fill="${fill}">${title}</rect>`;
  });
  const box = html`width="${width}" height="${size.height}" viewBox="0 0 ${width} ${size.height}"`;
  const label = chartLabel(counts, days);
  const svg = html`<svg class="chart" role="img" aria-label="${label}" ${box} xmlns="${svgNs}">${bars}</svg>`;
  if (!size.titled) return svg;
  // The large chart's span under it, for sighted readers (the image's name already says it).
  const span = (d: Date) => html`<span>${dayName(d)}</span>`;
  const caption = html`<figcaption aria-hidden="true">${span(days[0]!)}${span(days.at(-1)!)}</figcaption>`;
  return html`<figure class="chart-frame">${svg}${caption}</figure>`;
}
