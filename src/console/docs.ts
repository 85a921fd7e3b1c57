// The project's documents (docs/*.md and docs/architecture/*.md), served at /docs as the console's
// pages (pages/docs.ts). They are listed and read once, at start, into a table keyed by their
// name under docs/ (`api.md`, `architecture/console.md`): a request only ever looks a name up in
// that table, so no part of its path reaches the file system and `..` or an encoded slash names
// nothing (OWASP's Path Traversal advice: allow-list, never sanitise). A deployment without the
// folder serves an empty list.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface Doc {
  /** Its path under docs/, and its address under /docs. */
  name: string;
  /** Its first `# ` heading, else its name. */
  title: string;
  text: string;
}

const root = new URL('../../docs/', import.meta.url);

/** The markdown files of one folder under docs/ ('' for docs/ itself), by name. */
function read(folder: string): Doc[] {
  const dir = new URL(folder, root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => e.name)
    .sort()
    .map((file) => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      const title = /^# (.+)$/m.exec(text)?.[1]?.trim() ?? file;
      return { name: `${folder}${file}`, title, text };
    });
}

/** Every document, docs/ first, then docs/architecture/. */
export const docs: readonly Doc[] = [...read(''), ...read('architecture/')];

const byName = new Map(docs.map((d) => [d.name, d]));

/** The document of that name, or undefined: the only way a request reaches one. */
export const docNamed = (name: string): Doc | undefined => byName.get(name);
