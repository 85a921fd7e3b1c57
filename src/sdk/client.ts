// The typed HTTP client that the CLI itself uses. Each area adds a small API class in its own file
// (src/sdk/<area>.ts) built on `CairnClient.request`; src/sdk/index.ts puts them together.

export interface ClientOptions {
  baseUrl: string;
  secretKey?: string;
  publishableKey?: string;
  fetch?: typeof fetch;
  /** Sent as User-Agent, e.g. "cairn-cli/0.1.0". */
  userAgent?: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw bytes or a stream body, sent as-is (object uploads). */
  rawBody?: RequestInit['body'];
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** 'publishable' sends the publishable key instead of the secret key. */
  auth?: 'secret' | 'publishable' | 'none';
}

/** An error answer of the API, with its stable code (docs/api.md). */
export class CairnApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    body: { code?: string; message?: string; request_id?: string; details?: Record<string, unknown>; error?: string },
    retryAfter?: number,
  ) {
    super(body.message ?? body.error ?? `HTTP ${status}`);
    this.name = 'CairnApiError';
    this.status = status;
    this.code = body.code ?? body.error ?? 'internal';
    this.requestId = body.request_id;
    this.details = body.details;
    this.retryAfter = retryAfter;
  }
}

/**
 * The API could not be reached at all (nothing listens, the host does not resolve, the connection
 * dropped): no HTTP answer, so no code. `reason` says which, in words.
 */
export class CairnConnectionError extends Error {
  readonly baseUrl: string;
  readonly reason: string;

  constructor(baseUrl: string, reason: string, cause: unknown) {
    super(`could not reach the Cairn API at ${baseUrl} (${reason})`, { cause });
    this.name = 'CairnConnectionError';
    this.baseUrl = baseUrl;
    this.reason = reason;
  }
}

/** fetch's "fetch failed" wraps the socket's error: its code, in words. */
function unreachable(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused: nothing listens there',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name does not resolve (DNS failed)',
    ETIMEDOUT: 'the connection timed out',
    ECONNRESET: 'the connection was reset',
    EHOSTUNREACH: 'the host is unreachable',
    UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  };
  return (cause?.code && words[cause.code]) ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export class CairnClient {
  readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/$/, '') };
  }

  url(path: string, query?: RequestOptions['query']): string {
    const url = new URL(`${this.options.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** The raw Response, for downloads and streams; throws CairnApiError on an error answer. */
  async fetch(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    const auth = options.auth ?? 'secret';
    if (auth === 'secret' && this.options.secretKey) headers.authorization = `Bearer ${this.options.secretKey}`;
    if (auth === 'publishable' && this.options.publishableKey)
      headers['cairn-publishable-key'] = this.options.publishableKey;
    let body: RequestInit['body'] = options.rawBody;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    } else if (options.contentType) {
      headers['content-type'] = options.contentType;
    }
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body };
    if (body && typeof (body as ReadableStream).getReader === 'function') init.duplex = 'half';
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(this.url(path, options.query), init);
    } catch (err) {
      // "fetch failed" is fetch's own "no answer came" (refused, reset, cut); a bad URL or header
      // (also a TypeError), an abort or anything else is the caller's and passes unchanged.
      if (err instanceof TypeError && err.message.startsWith('fetch failed'))
        throw new CairnConnectionError(this.options.baseUrl, unreachable(err), err);
      throw err;
    }
    if (!res.ok) {
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { message: text.slice(0, 200) || `HTTP ${res.status}` };
      }
      const retryAfter = Number(res.headers.get('retry-after')) || undefined;
      throw new CairnApiError(res.status, parsed as ConstructorParameters<typeof CairnApiError>[1], retryAfter);
    }
    return res;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.fetch(method, path, options);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

/** `orgs/a/projects/b/envs/c` → `/v1/orgs/a/projects/b/envs/c` (validated, so no path tricks). */
export function envPath(envName: string): string {
  if (!/^orgs\/[a-z0-9-]+\/projects\/[a-z0-9-]+\/envs\/[a-z0-9-]+$/.test(envName)) {
    throw new Error(`"${envName}" is not an environment name (orgs/{org}/projects/{project}/envs/{env})`);
  }
  return `/v1/${envName}`;
}
