// The console (docs/api.md "Console"), served by the web process under /console: server-rendered
// pages for a team to see and triage its errors, say who is alerted, run backups and manage its users, one file per
// page (pages/), declared on the route kernel like every other route (page.ts has what they share).
// Each handler loads its data and hands it to a pure view (views/); the session comes from the
// kernel (`auth: 'console'`, through `resolveConsole`, which the app passes to mountRoutes). The
// service's landing page (`/`) and its documents (`/docs`) are served here too, in the same look.
import { consoleErrors, consoleHome } from './pages/errors.ts';
import { consoleBulkTriage } from './pages/errors-bulk.ts';
import { consoleGroup, consoleTriage } from './pages/group.ts';
import { consoleGroupEvent } from './pages/group-event.ts';
import { consoleAlerts, consoleCreateAlert, consoleDeleteAlert } from './pages/alerts.ts';
import { consoleBackUpNow, consoleBackups, consoleRestore } from './pages/backups.ts';
import { consoleOperation } from './pages/operation.ts';
import { consoleUser, consoleUsers } from './pages/users.ts';
import { userActionRoutes } from './pages/user-actions.ts';
import { consoleSignIn, consoleSignInPage } from './pages/sign-in.ts';
import { consoleSignOut } from './pages/sign-out.ts';
import { consoleSignInLink, consoleSignInLinkPage } from './pages/sign-in-link.ts';
import { consoleStylesheet } from './pages/stylesheet.ts';
import { landingPage } from './pages/landing.ts';
import { docPage, docPartPage, docsList } from './pages/docs.ts';

export { resolveConsole } from './auth.ts';

export const consoleRoutes = [
  consoleHome,
  consoleSignInPage,
  consoleSignIn,
  consoleSignInLinkPage,
  consoleSignInLink,
  consoleSignOut,
  consoleErrors,
  consoleBulkTriage,
  consoleGroup,
  consoleTriage,
  consoleGroupEvent,
  consoleAlerts,
  consoleCreateAlert,
  consoleDeleteAlert,
  consoleBackups,
  consoleBackUpNow,
  consoleRestore,
  consoleOperation,
  consoleUsers,
  consoleUser,
  ...userActionRoutes,
  consoleStylesheet,
  landingPage,
  docsList,
  docPage,
  docPartPage,
];
