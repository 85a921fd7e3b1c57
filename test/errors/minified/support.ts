// jQuery 3.7.1 as published, and the call sites of its minified code with the truth about each:
// the named function of the original jquery.js it lies in (parsed, at the position the map gives).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { CompactMap } from '../../../src/domain/errors/source-maps/compact-map.ts';
import { enclosingFunction, functionScopes } from '../../../src/domain/errors/source-maps/scopes.ts';

const dist = join(dirname(createRequire(import.meta.url).resolve('jquery/package.json')), 'dist');
export const minifiedText = readFileSync(join(dist, 'jquery.min.js'), 'utf8');
export const mapJson = readFileSync(join(dist, 'jquery.min.map'), 'utf8');
const original = readFileSync(join(dist, 'jquery.js'), 'utf8');
export const url = 'https://cdn.example.com/jquery/3.7.1/jquery.min.js';

export interface Site {
  line: number;
  column: number;
  truth: string;
}

const lineStartsOf = (text: string): number[] => {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
};

/** Call sites of the minified code (where V8 places a frame: the callee's name), 1-based, with the original function around them. */
export async function callSites(map: CompactMap): Promise<Site[]> {
  const { parseSync } = await import('oxc-parser');
  const program = parseSync('jquery.min.js', minifiedText, { lang: 'js' }).program as unknown;
  const lineStarts = lineStartsOf(minifiedText);
  const origStarts = lineStartsOf(original);
  const scopes = functionScopes(original, 'jquery.js');
  const sites: Site[] = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    const n = node as Record<string, unknown> & { type?: string };
    if (n.type === 'CallExpression') {
      const callee = n.callee as { type: string; start: number; property?: { start: number } };
      const offset = callee.type === 'MemberExpression' ? callee.property!.start : callee.start;
      let line = 0;
      while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= offset) line++;
      const column = offset - lineStarts[line]!;
      const pos = map.originalPositionFor(line + 1, column);
      const truth = pos ? enclosingFunction(scopes, (origStarts[pos.line - 1] ?? 0) + pos.column) : undefined;
      if (truth) sites.push({ line: line + 1, column: column + 1, truth });
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'type' && k !== 'start' && k !== 'end') visit(v);
  };
  visit(program);
  return sites;
}
