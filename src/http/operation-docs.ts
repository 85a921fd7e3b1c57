// Each operation's description in the OpenAPI document, read from docs/openapi.md: a
// `### <operationId>` heading, then its text up to the next heading. The prose lives with the
// docs a reader opens, and a route's declaration (src/api/routes, src/portal, src/console) keeps
// what the code checks: its path, schemas, summary and example body.
import { readFileSync } from 'node:fs';

export const operationDocsFile = new URL('../../docs/openapi.md', import.meta.url);

/** operationId → its description, from the markdown's `### ` sections (other headings end a section). */
export function parseOperationDocs(markdown: string): Map<string, string> {
  const docs = new Map<string, string>();
  let current: { id: string; lines: string[] } | undefined;
  const end = () => {
    if (current) docs.set(current.id, current.lines.join('\n').trim());
    current = undefined;
  };
  for (const line of markdown.split('\n')) {
    const heading = /^(#+)\s+(.*)$/.exec(line);
    if (heading) {
      end();
      if (heading[1] === '###') current = { id: heading[2]!.trim(), lines: [] };
    } else current?.lines.push(line);
  }
  end();
  return docs;
}

export const readOperationDocs = (): Map<string, string> => parseOperationDocs(readFileSync(operationDocsFile, 'utf8'));
