// The documents at /docs: a list of them (each by its title, its file under it), and one document
// as its markdown text, kept as written (a `<pre>` that wraps its lines, so a phone never scrolls
// sideways): the files read as plain text, and no markdown renderer is needed to serve them.
import { html, type Html } from '../../html/html.ts';

export interface DocEntry {
  name: string;
  title: string;
}

const item = (d: DocEntry): Html =>
  html`<li><a href="/docs/${d.name}">${d.title}</a> <span class="muted">${d.name}</span></li>`;

export function docsListView(list: readonly DocEntry[]): Html {
  const top = list.filter((d) => !d.name.includes('/'));
  const parts = list.filter((d) => d.name.includes('/'));
  if (list.length === 0) return html`<h1>Docs</h1><p class="empty">This deployment ships no documents.</p>`;
  return html`<h1>Docs</h1>
<p>The project’s documents, shown as they are written (markdown).</p>
<ul class="docs">${top.map(item)}</ul>
${parts.length ? html`<h2>Architecture, part by part</h2><ul class="docs">${parts.map(item)}</ul>` : ''}`;
}

/** The document under its title: its own first line, when it is that title, is not said twice. */
export const docView = (d: DocEntry & { text: string }): Html =>
  html`<p class="muted"><a href="/docs">Docs</a> / ${d.name}</p>
<h1>${d.title}</h1>
<pre class="doc">${d.text.replace(`# ${d.title}\n`, '').replace(/^\n+/, '')}</pre>`;

export const docNotFoundView = (): Html =>
  html`<h1>Not found</h1>
<p>There is no such document. <a href="/docs">See the list of documents</a>.</p>`;
