// The OpenAPI document describes every operation (docs/openapi.md, read by src/http/operation-docs.ts),
// describes nothing that is not an operation, and every body an operation takes has an example its
// own schema accepts: a reader, or a client generator, learns each call from the document alone,
// and neither a description nor an example can drift from the routes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../src/app/app.ts';
import { healthz, readyz } from '../../src/api/routes/system/index.ts';
import { operationDocsFile, parseOperationDocs } from '../../src/http/operation-docs.ts';

const routes = [healthz, readyz, ...allRoutes];
const docs = parseOperationDocs(readFileSync(operationDocsFile, 'utf8'));

describe('the OpenAPI document', () => {
  it('describes every operation in a sentence or more beyond its summary', () => {
    const bare = routes.filter((r) => (docs.get(r.operationId) ?? '').length < 40).map((r) => r.operationId);
    expect(bare).toEqual([]);
  });

  it('describes only operations that exist', () => {
    const ids = new Set(routes.map((r) => r.operationId));
    expect([...docs.keys()].filter((id) => !ids.has(id))).toEqual([]);
  });

  it('reads a description as the text under its heading, up to the next heading', () => {
    const parsed = parseOperationDocs(
      '# T\n\nintro\n\n## Area\n\n### opA\n\nOne.\n\nTwo.\n\n### opB\nThree.\n## Next\nnot B',
    );
    expect([...parsed]).toEqual([
      ['opA', 'One.\n\nTwo.'],
      ['opB', 'Three.'],
    ]);
  });

  it('gives every body an operation takes an example its schema accepts', () => {
    const problems: string[] = [];
    for (const r of routes) {
      if (!r.body) continue;
      if (r.example === undefined) problems.push(`${r.operationId}: no example`);
      else {
        const parsed = r.body.safeParse(r.example);
        if (!parsed.success) problems.push(`${r.operationId}: ${parsed.error.message}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
