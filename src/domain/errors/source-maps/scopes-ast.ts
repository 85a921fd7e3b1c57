// Function scopes from a real parse of the original source (oxc-parser: JS, TS, JSX and TSX in one
// native parser, an ESTree/TS-ESTree tree with UTF-16 offsets, as `sourcesContent` is indexed).
// Naming follows what a developer calls the function, as the heuristic before it did: a
// declaration or named function expression by its own name, an anonymous function or arrow by the
// variable, property or assignment target it is given to, object-literal methods by their key,
// and class members as `Class.member` (an anonymous class takes its variable's name). Anonymous
// callbacks are no scope of their own: a frame in one is named after the function around it.
import { createRequire } from 'node:module';
import type { Scope } from './scope-types.ts';

// The native parser is loaded on the first parse, not with this module: the web process imports
// it too (map validation goes through CompactMap) but never parses a source, and loading the
// binding costs a process ~8 MB of RSS. Node 24 requires an ES module synchronously.
type Oxc = typeof import('oxc-parser');
let oxc: Oxc | undefined;
const parser = (): Oxc => (oxc ??= createRequire(import.meta.url)('oxc-parser') as Oxc);

export type Lang = 'js' | 'jsx' | 'ts' | 'tsx';

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null && typeof (x as Node).type === 'string';

const functionTypes = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
const classTypes = new Set(['ClassDeclaration', 'ClassExpression']);

/** A name and where its token starts in the text. */
interface Named {
  name: string;
  at: number;
}

/** The name a key or binding spells, when it spells one (not a computed `[expr]`). */
function keyName(key: unknown, computed = false): Named | undefined {
  if (!isNode(key)) return undefined;
  if (key.type === 'Identifier') return computed ? undefined : { name: key.name as string, at: key.start };
  if (key.type === 'PrivateIdentifier') return { name: `#${key.name as string}`, at: key.start };
  if (key.type === 'Literal' && (typeof key.value === 'string' || typeof key.value === 'number'))
    return { name: String(key.value), at: key.start };
  return undefined;
}

/** The name a function or class gets from where it stands: `const f =`, `{ f: … }`, `x.f =`, `f = …` defaults. */
function givenName(parent: Node | undefined, child: Node): Named | undefined {
  if (!parent) return undefined;
  switch (parent.type) {
    case 'VariableDeclarator':
      return parent.init === child ? keyName(parent.id) : undefined;
    case 'Property':
    case 'PropertyDefinition':
    case 'MethodDefinition':
    case 'TSAbstractMethodDefinition':
      return parent.value === child ? keyName(parent.key, parent.computed as boolean) : undefined;
    case 'AssignmentExpression':
    case 'AssignmentPattern': {
      if (parent.right !== child) return undefined;
      const left = parent.left as Node;
      return left.type === 'MemberExpression' ? keyName(left.property, left.computed as boolean) : keyName(left);
    }
    default:
      return undefined;
  }
}

/** Parses `source` as `lang`; undefined when the parser reports any error (the caller falls back). */
export function astScopes(source: string, lang: Lang): Scope[] | undefined {
  const result = parser().parseSync(`source.${lang}`, source, {
    lang,
    sourceType: 'unambiguous',
    preserveParens: false,
  });
  if (result.errors.length > 0) return undefined;
  const scopes: Scope[] = [];
  // `cls`: the class whose body `node` is directly in (members are `Class.member`); reset inside a
  // function, where a nested declaration is named on its own, as the heuristic named it.
  const visit = (node: Node, parent: Node | undefined, cls: Named | undefined): void => {
    let inner = cls;
    if (functionTypes.has(node.type) && node.body) {
      const own = node.type === 'ArrowFunctionExpression' ? undefined : keyName(node.id);
      const given = givenName(parent, node);
      const member =
        cls !== undefined &&
        parent !== undefined &&
        (parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition');
      let name: string | undefined;
      let tokens: number[] = [];
      if (member) {
        if (given !== undefined && cls.name) {
          name = `${cls.name}.${given.name}`;
          tokens = [cls.at, given.at];
        } else if (given !== undefined) {
          name = given.name;
          tokens = [given.at];
        }
      } else {
        const named = own ?? given;
        if (named) {
          name = named.name;
          tokens = [named.at];
        }
      }
      if (name !== undefined) scopes.push({ name, start: node.start, end: node.end - 1, tokens });
      inner = undefined;
    } else if (classTypes.has(node.type)) {
      inner = keyName(node.id) ?? givenName(parent, node) ?? { name: '', at: node.start };
    } else if (
      node.type !== 'ClassBody' &&
      node.type !== 'MethodDefinition' &&
      node.type !== 'PropertyDefinition' &&
      node.type !== 'TSAbstractMethodDefinition'
    ) {
      // Anything else between a class and its members (a decorator, a computed key) is not a member.
      if (parent && classTypes.has(parent.type)) inner = undefined;
    }
    for (const key in node) {
      if (key === 'type' || key === 'start' || key === 'end') continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item, node, inner);
      } else if (isNode(value)) {
        visit(value, node, inner);
      }
    }
  };
  visit(result.program as unknown as Node, undefined, undefined);
  return scopes.sort((a, b) => a.start - b.start);
}
