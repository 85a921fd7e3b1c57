// One error class with stable codes (docs/api.md "Error body and HTTP status"). Domain code throws
// codes; only the API edge turns them into HTTP statuses.

export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  mfa_required: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  INVALID_STATE: 409,
  ETAG_MISMATCH: 412,
  locked_out: 423,
  rate_limited: 429,
  internal: 500,
  store_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface AppErrorOptions {
  details?: Record<string, unknown>;
  /** Seconds; sent as Retry-After (required for locked_out, rate_limited, store_unavailable). */
  retryAfter?: number;
  /** Overrides the code's status where the contract says so (413 for an oversized body). */
  status?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.status = options.status ?? errorStatus[code];
  }
}

export function assertThat(
  condition: unknown,
  code: ErrorCode,
  message: string,
  options?: AppErrorOptions,
): asserts condition {
  if (!condition) throw new AppError(code, message, options);
}

// Connection-level failures: the store is away, not the request wrong. SQLSTATE class 08
// (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now),
// 53300 (too many connections), 57014 (a statement cancelled at its statement_timeout:
// db-timeouts.ts), and the socket errors node-postgres surfaces as-is.
const unavailableSqlStates = /^(08...|57P0[123]|57014|53300)$/;
const unavailableErrnos = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);
const unavailableMessages =
  /Connection terminated|Query read timeout|is not queryable|Timeout acquiring a connection|connection timeout|Client has encountered a connection error|the database system is (starting up|shutting down)|terminating connection/i;

export function isStoreUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (typeof e !== 'object') return false;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (unavailableSqlStates.test(code) || unavailableErrnos.has(code))) return true;
    if (typeof message === 'string' && unavailableMessages.test(message)) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isStoreUnavailable(x))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
