// The layers' directions and sizes are ESLint rules (eslint.config.js), so a change that adds a
// wrong-way import fails CI's lint step. These probes lint a would-be file at a real place in the
// tree and check that each kind of arrow the architecture forbids is refused, and an allowed one
// is not (docs/architecture.md draws the layers).
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const eslint = new ESLint({ cwd: root });

/** The rule ids ESLint reports for `code` placed at `file` (repo-relative; the file need not exist). */
async function rulesFor(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

const restricted = 'import-x/no-restricted-paths';

describe('layer rules', () => {
  it.each([
    ['the contract importing the domain', 'src/contract/probe.ts', '../domain/errors/groups/queries.ts'],
    ['the kernel importing the domain', 'src/http/probe.ts', '../domain/tenancy/keys.ts'],
    ['the domain importing the kernel', 'src/domain/errors/probe.ts', '../../http/route.ts'],
    ['the domain importing a surface', 'src/domain/errors/probe.ts', '../../console/page.ts'],
    ['the queue runtime importing a feature', 'src/jobs/probe.ts', '../domain/backups/queues.ts'],
    ['the API importing the console', 'src/api/probe.ts', '../console/page.ts'],
    ['the console importing the portal', 'src/console/probe.ts', '../portal/layout.ts'],
    ['base importing a feature', 'src/ids.ts', './domain/tenancy/keys.ts'],
    ['the SDK importing the domain', 'src/sdk/probe.ts', '../domain/tenancy/keys.ts'],
  ])('refuses %s', async (_what, file, target) => {
    const rules = await rulesFor(file, `import * as probe from '${target}';\nexport const p = probe;\n`);
    expect(rules).toContain(restricted);
  });

  it('lets a surface import the domain and the domain import the contract', async () => {
    const down = await rulesFor(
      'src/api/probe.ts',
      "import * as d from '../domain/tenancy/keys.ts';\nexport const p = d;\n",
    );
    const bottom = await rulesFor(
      'src/domain/probe.ts',
      "import * as c from '../contract/pages.ts';\nexport const p = c;\n",
    );
    expect(down).not.toContain(restricted);
    expect(bottom).not.toContain(restricted);
  });

  it('refuses a file over 300 lines and a function over 80', async () => {
    const long = Array.from({ length: 301 }, (_, i) => `export const v${i} = ${i};`).join('\n');
    const body = Array.from({ length: 85 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    expect(await rulesFor('src/domain/probe.ts', long)).toContain('max-lines');
    expect(await rulesFor('src/domain/probe.ts', `export function f() {\n${body}\n  return 0;\n}\n`)).toContain(
      'max-lines-per-function',
    );
  });
});
