// The calls a web page makes with the environment's publishable key (docs/api.md "Identity",
// `/v1/client/*`): sign up, sign in in browser mode, the current session, sign out, password reset.
// Nothing here takes the secret key: it must never reach a browser. The API answers these routes
// with CORS for any origin and never uses cookies, so the bearer stays where the page keeps it.
//   const cairn = createCairnBrowser({ baseUrl: 'https://auth.example.com', publishableKey });
//   const { session_token } = await cairn.signIn('ada@example.com', password);
import { CairnClient, type ClientOptions } from './client.ts';

import type { EndUser, FactorProof, Session, SessionWithToken } from '../contract/identity.ts';

export type { FactorProof };

export class SignInApi {
  private readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  /** Always accepted, whether or not the address has an account; the verification mail says the rest. */
  signUp(email: string, password: string, options: { redirectUrl?: string } = {}): Promise<{ accepted: true }> {
    return this.client.request('POST', '/v1/client/sign-up', {
      auth: 'publishable',
      body: { email, password, redirect_url: options.redirectUrl },
    });
  }

  /** Browser mode: the session and its bearer; TOTP or a recovery code goes in `factorProofs`. */
  signIn(
    identifier: string,
    password: string,
    options: { factorProofs?: FactorProof[] } = {},
  ): Promise<SessionWithToken> {
    return this.client.request('POST', '/v1/client/sign-in/password', {
      auth: 'publishable',
      body: { identifier, password, session_mode: 'browser', factor_proofs: options.factorProofs ?? [] },
    });
  }

  /** The session behind a bearer; throws CairnApiError 401 once it has ended. */
  currentSession(sessionToken: string): Promise<{ session: Session; user: EndUser }> {
    return this.client.request('GET', '/v1/client/session', {
      auth: 'none',
      headers: { authorization: `Bearer ${sessionToken}` },
    });
  }

  async signOut(sessionToken: string): Promise<void> {
    await this.client.request('POST', '/v1/client/sign-out', {
      auth: 'none',
      headers: { authorization: `Bearer ${sessionToken}` },
    });
  }

  /** Always accepted; mails a reset link when the address has an account. */
  requestPasswordReset(email: string, options: { redirectUrl?: string } = {}): Promise<{ accepted: true }> {
    return this.client.request('POST', '/v1/client/password-reset', {
      auth: 'publishable',
      body: { email, redirect_url: options.redirectUrl },
    });
  }

  /** Sets the new password with the mailed token; every session of the user ends. */
  confirmPasswordReset(token: string, password: string): Promise<{ reset: true }> {
    return this.client.request('POST', '/v1/client/password-reset:confirm', {
      auth: 'publishable',
      body: { token, password },
    });
  }
}

export interface BrowserOptions {
  baseUrl: string;
  publishableKey: string;
  fetch?: typeof fetch;
}

export function createCairnBrowser(options: BrowserOptions): SignInApi {
  const { baseUrl, publishableKey } = options;
  // Only these three options: a secret key passed here by mistake is dropped, never sent.
  const client: ClientOptions = { baseUrl, publishableKey, fetch: options.fetch };
  return new SignInApi(new CairnClient(client));
}

export { CairnApiError, CairnConnectionError } from './client.ts';
export type { EndUser, Session, SessionWithToken };
