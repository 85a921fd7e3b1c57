// End users, sessions and tickets (docs/api.md "Identity"), for the application's server and the
// CLI. Environment names are validated by envPath, so no path tricks.
import { SignInApi } from './browser.ts';
import { envPath, type CairnClient } from './client.ts';

import type { EndUser, Session, SessionWithToken, SignIn } from '../contract/identity.ts';

export type { EndUser, Session, SessionWithToken, SignIn };

export interface PageOptions {
  pageSize?: number;
  pageToken?: string;
}

const userId = (id: string): string => {
  if (!/^eu_[0-9a-z]{26}$/.test(id)) throw new Error(`"${id}" is not an end user id (eu_…)`);
  return id;
};

export class EndUsersApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  list(
    env: string,
    options: PageOptions & { email?: string; emailContains?: string } = {},
  ): Promise<{ end_users: EndUser[]; next_page_token?: string }> {
    return this.client.request('GET', `${envPath(env)}/end_users`, {
      query: {
        page_size: options.pageSize,
        page_token: options.pageToken,
        email: options.email,
        email_contains: options.emailContains,
      },
    });
  }

  get(env: string, id: string): Promise<EndUser> {
    return this.client.request('GET', `${envPath(env)}/end_users/${userId(id)}`);
  }

  create(env: string, body: { email: string; password?: string; email_verified?: boolean }): Promise<EndUser> {
    return this.client.request('POST', `${envPath(env)}/end_users`, { body });
  }

  async delete(env: string, id: string): Promise<void> {
    await this.client.request('DELETE', `${envPath(env)}/end_users/${userId(id)}`);
  }

  revokeSessions(env: string, id: string): Promise<{ revoked: number }> {
    return this.client.request('POST', `${envPath(env)}/end_users/${userId(id)}:revokeSessions`);
  }

  /** Ends one session; the user's others go on. */
  revokeSession(env: string, id: string, sessionId: string): Promise<Session> {
    if (!/^sess_[0-9a-z]{26}$/.test(sessionId)) throw new Error(`"${sessionId}" is not a session id (sess_…)`);
    return this.client.request('POST', `${envPath(env)}/end_users/${userId(id)}/sessions/${sessionId}:revoke`);
  }

  /** No sign-in until unlocked; every session ends at once. */
  lock(env: string, id: string): Promise<EndUser> {
    return this.client.request('POST', `${envPath(env)}/end_users/${userId(id)}:lock`);
  }

  unlock(env: string, id: string): Promise<EndUser> {
    return this.client.request('POST', `${envPath(env)}/end_users/${userId(id)}:unlock`);
  }

  /** Removes a lost TOTP factor and its recovery codes. */
  resetTotp(env: string, id: string): Promise<EndUser> {
    return this.client.request('DELETE', `${envPath(env)}/end_users/${userId(id)}/factors/totp`);
  }

  listSessions(
    env: string,
    id: string,
    options: PageOptions = {},
  ): Promise<{ sessions: Session[]; next_page_token?: string }> {
    return this.client.request('GET', `${envPath(env)}/end_users/${userId(id)}/sessions`, {
      query: { page_size: options.pageSize, page_token: options.pageToken },
    });
  }

  listSignIns(
    env: string,
    id: string,
    options: PageOptions = {},
  ): Promise<{ sign_ins: SignIn[]; next_page_token?: string }> {
    return this.client.request('GET', `${envPath(env)}/end_users/${userId(id)}/sign_ins`, {
      query: { page_size: options.pageSize, page_token: options.pageToken },
    });
  }

  /** Branding, second-factor policy, session lifetimes, redirect origins and per-IP limits. */
  getSettings(env: string): Promise<Record<string, unknown>> {
    return this.client.request('GET', `${envPath(env)}/identity_settings`);
  }

  /** Replaces the settings; unset fields go back to their defaults. */
  putSettings(env: string, settings: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.client.request('PUT', `${envPath(env)}/identity_settings`, { body: settings });
  }

  /** Server mode: trade the page's ticket for a session (two minutes, one use). */
  redeemTicket(ticket: string): Promise<SessionWithToken> {
    return this.client.request('POST', '/v1/client/tickets:redeem', { body: { ticket } });
  }

  /** The session behind a bearer taken from the application's cookie; throws 401 once it has ended. */
  currentSession(sessionToken: string): Promise<{ session: Session; user: EndUser }> {
    return new SignInApi(this.client).currentSession(sessionToken);
  }

  signOut(sessionToken: string): Promise<void> {
    return new SignInApi(this.client).signOut(sessionToken);
  }
}
