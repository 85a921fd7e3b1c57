// Errors of the OAuth endpoints in the RFC 6749 §5.2 / RFC 8628 §3.5 form ({"error", …}), so
// that standard OAuth clients work unchanged (docs/api.md). Only these two endpoints use it.
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'server_error'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly retryAfter: number | undefined;

  constructor(error: OAuthErrorCode, description: string, options: { status?: number; retryAfter?: number } = {}) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    // §5.2: 400 for everything but a failed client authentication, which is 401.
    this.status = options.status ?? (error === 'invalid_client' ? 401 : 400);
    this.retryAfter = options.retryAfter;
  }
}
