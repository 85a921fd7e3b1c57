// Golden files of the console's views: each view is a pure function of its data, so its HTML is
// compared as it is with a file under fixtures/. CAIRN_UPDATE_GOLDEN=1 rewrites them (review the diff).
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);

export function golden(name: string, actual: string): void {
  if (process.env.CAIRN_UPDATE_GOLDEN === '1') writeFileSync(fixture(name), actual);
  expect(actual).toBe(readFileSync(fixture(name), 'utf8'));
}
