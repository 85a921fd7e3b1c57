// The occurrence chart is a pure function of its counts and last day: golden SVG fixtures for the
// list's small chart and the group page's large one, and its accessible name in words.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chartLabel, chartSizes, occurrenceChart } from '../../src/console/views/chart.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);
/** Compares with the golden file; CAIRN_UPDATE_GOLDEN=1 rewrites it (review the diff). */
function golden(name: string, actual: string): void {
  if (process.env.CAIRN_UPDATE_GOLDEN === '1') writeFileSync(fixture(name), actual);
  expect(actual).toBe(readFileSync(fixture(name), 'utf8'));
}

const lastDay = new Date('2026-11-26T15:04:05Z');
const counts = [0, 0, 3, 1, 0, 0, 0, 12, 40, 7, 0, 0, 1, 2];

describe('occurrenceChart', () => {
  it('draws the small chart of the list', () => {
    golden('chart-small.svg', occurrenceChart(counts, lastDay, chartSizes.small).value + '\n');
  });

  it('draws the large chart of a group, each bar titled, its span captioned', () => {
    golden('chart-large.html', occurrenceChart(counts, lastDay, chartSizes.large).value + '\n');
  });

  it('names the chart by its total and busiest day, in UTC days ending on the last day', () => {
    const days = counts.map((_, i) => new Date(Date.UTC(2026, 10, 13 + i)));
    expect(chartLabel(counts, days)).toBe('Events per day, last 14 days: 66 events, most on 21 Nov (40)');
    expect(chartLabel([0, 1], days)).toBe('Events per day, last 2 days: 1 event, most on 14 Nov (1)');
    expect(chartLabel(new Array(14).fill(0), days)).toBe('No events in the last 14 days');
    expect(occurrenceChart(counts, lastDay, chartSizes.small).value).toContain(
      'aria-label="Events per day, last 14 days: 66 events, most on 21 Nov (40)"',
    );
  });

  it('draws a 1 px grey mark for an empty day and scales bars to the busiest', () => {
    const svg = occurrenceChart([0, 5], lastDay, chartSizes.small).value;
    expect(svg).toMatch(/<rect x="0" y="27" width="6" height="1"[^>]*fill="#c4c9cf"/);
    expect(svg).toMatch(/<rect x="8" y="0" width="6" height="28"[^>]*fill="#1d4fc4"/);
  });
});
