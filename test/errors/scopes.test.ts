// Function scopes of original sources (src/domain/errors/source-maps/scopes.ts) against golden files:
// each fixture's scopes as `name@line:column-line:column`, parsed in the language its extension
// names, with the heuristic as the fallback for what the parser refuses. The cases are the ones the
// heuristic got wrong: TypeScript object types and destructured defaults in parameters, `${…}` in
// template literals, regex literals with quotes and braces, JSX, class fields and private methods.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  enclosingFunction,
  functionScopes,
  languagesFor,
  maxParsedLength,
} from '../../src/domain/errors/source-maps/scopes.ts';
import type { Scope } from '../../src/domain/errors/source-maps/scope-types.ts';
import { heuristicScopes } from '../../src/domain/errors/source-maps/scopes-heuristic.ts';

const dir = new URL('./fixtures/scopes/', import.meta.url).pathname;
const golden = JSON.parse(readFileSync(`${dir}golden.json`, 'utf8')) as Record<string, string[]>;

function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}

const describeScopes = (text: string, scopes: Scope[]) =>
  scopes.map((s) => `${s.name}@${position(text, s.start)}-${position(text, s.end)}`);

describe('functionScopes', () => {
  // Fixtures end in `.txt`, out of the compiler's and the linter's way; the name before it is the path.
  const fixtures = readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .map((f) => f.slice(0, -4))
    .sort();

  it('has a golden file entry for every fixture', () => {
    expect(Object.keys(golden).sort()).toEqual(fixtures);
  });

  for (const file of fixtures) {
    it(`names the functions of ${file}`, () => {
      const text = readFileSync(`${dir}${file}.txt`, 'utf8');
      expect(describeScopes(text, functionScopes(text, `webpack://app/src/${file}`))).toEqual(golden[file]);
    });
  }

  it('finds what the heuristic missed, and names the function around a callback', () => {
    const text = readFileSync(`${dir}typescript.ts.txt`, 'utf8');
    const at = (needle: string) => enclosingFunction(functionScopes(text, 'src/typescript.ts'), text.indexOf(needle));
    expect(heuristicScopes(text).map((s) => s.name)).not.toContain('withObjectType');
    expect(at('return opts.b.c')).toBe('withObjectType');
    expect(at('return c + Object')).toBe('withDestructuredDefaults');
    expect(at('return inner;')).toBe('withTemplate');
    expect(at('/\\/{2}`/')).toBe('withRegex');
    expect(at('item.price')).toBe('Cart.total');
    expect(at('inner();')).toBe('Cart.#checkout');
    expect(at('function inner')).toBe('inner');
    expect(at('return url')).toBe('fetch');
    expect(at('const target')).toBeUndefined();
  });

  it('picks the language by extension, query aside, and tries TS then JS otherwise', () => {
    expect(languagesFor('webpack://app/src/a.tsx?x=1#y')).toEqual(['tsx']);
    expect(languagesFor('lib/a.mts')).toEqual(['ts']);
    expect(languagesFor('lib/a.CJS')).toEqual(['jsx']);
    expect(languagesFor('src/App.vue?vue&type=script&lang.ts')).toEqual(['ts', 'jsx']);
    expect(languagesFor('no-extension')).toEqual(['ts', 'jsx']);
  });

  it('leaves a source too big to parse in the worker to the heuristic', () => {
    const fn = 'function f(a: { b: number }) {\n  return a.b;\n}\n';
    const big = fn.repeat(Math.ceil((maxParsedLength + 1) / fn.length));
    expect(functionScopes(big, 'big.ts')).toEqual(heuristicScopes(big));
    expect(functionScopes(fn, 'small.ts').map((s) => s.name)).toEqual(['f']);
  });
});
