// A Slack action's URL: an incoming webhook's URL is a bearer secret (whoever holds it posts to
// the channel), so a rule keeps it sealed under the service key, bound to its rule (docs/conventions.md
// "Secrets"), and shows only its hint. Opened by the send job alone, just before the POST.
import { open, seal, type Keyring } from '../../../crypto.ts';

/** The seal's context: a sealed URL copied to another rule does not open. */
export const slackUrlContext = (ruleId: string): string => `alert-slack-url:${ruleId}`;

export const sealSlackUrl = (keyring: Keyring, ruleId: string, url: string): string =>
  seal(keyring, url, slackUrlContext(ruleId));

export const openSlackUrl = (keyring: Keyring, ruleId: string, sealed: string): string =>
  open(keyring, sealed, slackUrlContext(ruleId)).toString('utf8');
