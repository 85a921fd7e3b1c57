// The landing page at `/`: what the service is, and the ways in (the console, the documents, the
// health checks and the API's OpenAPI document), each a plain link.
import { html, type Html } from '../../html/html.ts';

const ways: [href: string, label: string, what: Html][] = [
  [
    '/console',
    'Console',
    html`An environment’s errors, alerts, end users and backups. Sign in with the one-use link
<code>npm start</code> prints, or with a secret key.`,
  ],
  ['/docs', 'Docs', html`The HTTP API, operating the service, and its architecture.`],
  ['/healthz', 'Health check', html`Answers while the web process is up; <code>/readyz</code> also asks the database.`],
  ['/v1/openapi.json', 'OpenAPI document', html`Every route of the API, with its parameters and answers.`],
];

export const landingView = (): Html =>
  html`<h1>Cairn</h1>
<p>Sign-in for end users, Postgres backups and error tracking, in one service.</p>
<ul class="ways">${ways.map(
    ([href, label, what]) => html`<li><a href="${href}">${label}</a><p class="muted">${what}</p></li>`,
  )}</ul>`;
