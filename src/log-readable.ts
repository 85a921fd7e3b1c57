// The log as a person reads it in a terminal, for `npm start` only: the Procfile's processes keep
// pino's JSON lines (one event per line, for a log drain). Each JSON line becomes at most one line
// of text: the time, the message and its fields; a request as `GET /path 200 3 ms`; warnings and
// errors marked (in colour on a terminal, unless NO_COLOR is set: https://no-color.org). A mail a
// test environment wrote to the outbox is printed whole, set apart, since without SMTP_URL that is
// where a developer finds the verification link (src/mail/index.ts logs a test environment's body;
// never a live one's).

/** A pino line's fields (levels as numbers: https://getpino.io/#/docs/api?id=levels). */
type Line = Record<string, unknown> & { level?: number; time?: number; msg?: string };

export interface ReadableOptions {
  /** ANSI colours (a terminal that has not asked for none). */
  colour: boolean;
}

/** Fields every line carries, or that the line's own shape already says. */
const hidden = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'trace_flags']);

const paint = (on: boolean, code: string, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);

/** C0 and C1 control characters and DEL: terminal escape sequences start with them. */
const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** A value from a log line or a mail, with no control character left (newlines kept when asked). */
export function clean(value: unknown, keepNewlines = false): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return [...text].filter((c) => (keepNewlines && c === '\n') || !isControl(c.codePointAt(0)!)).join('');
}

const clock = (time: number | undefined) => new Date(time ?? Date.now()).toISOString().slice(11, 19);

function fields(line: Line, skip: ReadonlySet<string>): string {
  const out: string[] = [];
  for (const [key, value] of Object.entries(line)) {
    if (hidden.has(key) || skip.has(key) || value === undefined) continue;
    const shown =
      key === 'err' && value && typeof value === 'object' ? (value as { message?: unknown }).message : value;
    out.push(`${key}=${clean(shown)}`);
  }
  return out.join(' ');
}

/** Ids that lead from a line to its request or trace: for the JSON log, not for a person reading. */
const traceFields = new Set(['request_id', 'trace_id', 'span_id']);
const requestFields = new Set([...traceFields, 'method', 'path', 'status', 'ms']);

/** The text of one pino line, without its newline. */
export function readableLine(line: Line, options: ReadableOptions): string {
  const level = line.level ?? 30;
  const mark =
    level >= 50 ? paint(options.colour, '31', 'error ') : level >= 40 ? paint(options.colour, '33', 'warn ') : '';
  const time = paint(options.colour, '2', clock(line.time));
  if (line.msg === 'request') {
    const status = Number(line.status);
    const text = `${clean(line.method)} ${clean(line.path)} ${status} ${clean(line.ms)} ms`;
    const rest = fields(line, requestFields);
    const shown =
      status >= 500 ? paint(options.colour, '31', text) : status >= 400 ? paint(options.colour, '33', text) : text;
    return `${time} ${mark}${shown}${rest ? ` ${rest}` : ''}`;
  }
  const rest = fields(line, traceFields);
  return `${time} ${mark}${clean(line.msg ?? '')}${rest ? ` ${paint(options.colour, '2', rest)}` : ''}`;
}

/** A mail written to the outbox, set apart: who it is to, its subject and its whole text. */
export function readableMail(line: Line): string | null {
  if (!line.msg?.startsWith('mail written to the outbox') || typeof line.text !== 'string') return null;
  return [
    '',
    `── mail to ${clean(line.to)}: ${clean(line.subject)} (${clean(line.mail_id)}; again: npx cairn admin outbox list --env <env name>) ──`,
    clean(line.text, true).trimEnd(),
    '──',
  ].join('\n');
}

/**
 * A pino destination writing readable lines to `out` (and mails, set apart, to `mails`), or, with
 * `json`, pino's own lines to `out` and only the mails readably.
 */
export function readableDestination(
  out: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>,
  mails: Pick<NodeJS.WriteStream, 'write'>,
  { json = false, env = process.env }: { json?: boolean; env?: Record<string, string | undefined> } = {},
): { write(line: string): void } {
  const options = { colour: Boolean(out.isTTY) && !env.NO_COLOR };
  return {
    write(text: string) {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        out.write(text);
        return;
      }
      const mail = readableMail(line);
      if (json) out.write(text);
      else if (!mail) out.write(`${readableLine(line, options)}\n`);
      if (mail) mails.write(`${mail}\n`);
    },
  };
}
