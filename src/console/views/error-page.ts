// The pages of a refusal: a section the key has no scope for (in the signed-in layout), and any
// other error a page meets (not found, conflict, invalid request), saying what went wrong.
import { html, type Html } from '../../html/html.ts';
import { alert } from './components.ts';

export const lacksScopeView = (title: string, scope: string): Html =>
  html`<h1>${title}</h1>${alert('error', `The key this console was opened with lacks the scope ${scope}.`)}`;

export function errorPageView(status: number, message: string): Html {
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : 'Something went wrong';
  return html`<h1>${title}</h1>
${alert('error', message)}
<p><a href="/console/errors">Back to the console</a></p>`;
}
