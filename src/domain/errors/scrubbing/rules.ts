// The default scrubbing rules (docs/api.md "[Filtered]"). Each rule replaces only the
// secret and keeps the text around it, so a message stays readable. Sentry's defaults look only at
// key names and miss secrets inside messages (getsentry/sentry#76846); these look at the text.
// Every pattern is bounded (no nested or unbounded quantifiers over the same characters), so a
// 64 KiB string costs linear time.
import { isIPv6 } from 'node:net';
import { defaultRuleNames, type DefaultRuleName } from '../../../contract/scrubbing.ts';

export const filtered = '[Filtered]';

export interface ScrubRule {
  name: string;
  pattern: RegExp;
  /** Which capture group is the secret (0: the whole match). */
  group?: number;
  /** A second check on the candidate (Luhn, a real IPv6 address). */
  accept?: (secret: string) => boolean;
  /**
   * `pattern` finds the names of `name=value` parameters (group 1), and a parameter's value goes,
   * up to `&`, `#`, `; ` or a space, when its name is a sensitive key (scrub.ts `replaceParameters`).
   */
  parameters?: true;
  /** A cheap test every match must pass: most strings skip the rule's regex altogether. */
  hint?: string | RegExp;
}

/** Luhn (ISO/IEC 7812-1) over the digits only, so "4111 1111-1111 1111" counts. */
export function luhn(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  if (!/^\d{13,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// Issuer prefixes (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay) keep epoch
// milliseconds and order numbers out; Luhn removes most of the rest.
const issuer = /^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6(?:011|5|4[4-9]|2))/;

export function isCardNumber(candidate: string): boolean {
  return issuer.test(candidate) && luhn(candidate);
}

// Key names whose values are secrets wherever they appear, at any depth of an event (a form's
// `password`, `extra.config.db.passwd`, a header `X-Api-Key`): getsentry/relay's `@password` key
// rule (PASSWORD_KEY_REGEX, substring and case-insensitive) joined with sentry-python's default
// denylist (sentry_sdk/scrubber.py: session cookies such as Express's `connect.sid` and PHP's
// `PHPSESSID`, `X-Forwarded-For`, `X-Real-IP`). `pass` and `sid` count as whole names or after a
// non-letter (`db_pass`, `connect.sid`), so `bypass` and `compass` are not secrets.
export const sensitiveKeyPattern =
  /pass(?:w(?:or)?d|phrase)|(?:^|[^a-z])pass$|pwd|secret|token|api[_-]?key|auth|credential|private[_-]?key|session|sessid|(?:^|[^a-z])sid$|cookie|csrf|xsrf|jwt|forwarded[_-]for|^forwarded$|real[_-]?ip|^otp$|^two[_-]?factor$/i;

/** Every name `sensitiveKeyPattern` matches contains one of these: a text without any holds no such name. */
export const sensitiveKeyHint =
  /pass|pwd|secret|token|api[_-]?key|auth|credential|private[_-]?key|sess|sid|cookie|csrf|xsrf|jwt|forwarded|real[_-]?ip|otp|two[_-]?factor/i;

/** A URL query or form parameter's name, decoded (`%70assword`, `user[password]`, `a+b`). */
export function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).trim();
  } catch {
    return raw.trim();
  }
}

// Query parameters that carry a credential without naming one: an OAuth authorization code
// (RFC 6749 §4.1.2) and a signed URL's signature.
const queryOnlySecrets = /^(?:code|sig|signature)$/i;

/** Whether a query parameter's value is a secret by its name alone. */
export const isSecretParameter = (raw: string): boolean => {
  const name = parameterName(raw);
  return sensitiveKeyPattern.test(name) || queryOnlySecrets.test(name);
};

const keyNames =
  'pass(?:word|wd|phrase)?|pwd|[a-z_]*secret|[a-z_]*token|api[_-]?key|apikey|credentials?|private[_-]?key|sessionid|session_id';

const ruleOf: Record<DefaultRuleName, Omit<ScrubRule, 'name'>> = {
  pem_private_key: {
    hint: 'PRIVATE KEY',
    pattern:
      /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY-----[A-Za-z0-9+/=\s:,-]{1,16384}?-----END \1PRIVATE KEY-----/g,
  },
  jwt: { hint: 'eyJ', pattern: /\beyJ[A-Za-z0-9_-]{4,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{0,4096}/g },
  cairn_secret_key: { hint: 'cairn_sk_', pattern: /\bcairn_sk_(?:test|live)_[0-9A-Za-z]{32,128}\b/g },
  aws_access_key: { pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  bearer: { hint: /bearer/i, pattern: /\b(Bearer\s{1,8})([A-Za-z0-9\-._~+/]{8,4096}=*)/gi, group: 2 },
  basic_auth: { hint: 'Basic', pattern: /\b(Basic\s{1,8})([A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])/g, group: 2 },
  // RFC 3986 userinfo: scheme://user:password@host — only the password goes.
  url_password: {
    hint: '://',
    pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/?#@]{0,256}:)([^\s/?#@]{1,256})(@)/gi,
    group: 2,
  },
  // Parameters of a query string, form body (`password=x&user=y`) or Cookie header (`a=1; sid=x`),
  // wherever they are in a text: a value goes whole when its parameter's name is a sensitive key.
  query_secret: { hint: '=', pattern: /(?:^|[?&;])\s{0,8}([\w.~%+[\]-]{1,128})=/g, parameters: true },
  // `password=x`, `password: x`, `"password":"x"`, `secret_token='x'`.
  secret_key_value: {
    hint: /pass|pwd|secret|token|api.?key|private.?key|credential|session/i,
    pattern: new RegExp(
      `\\b((?:${keyNames})["']?\\s{0,4}[:=]\\s{0,4}["']?)(?!\\[Filtered\\])([^\\s"'&,;}]{1,4096})`,
      'gi',
    ),
    group: 2,
  },
  credit_card: {
    hint: /\d{4}/,
    // Printed forms: 13-19 digits, 4-4-4-4(-3) or Amex 4-6-5 with one kind of separator.
    pattern: /(?<![\d-])(?:\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -])\d{6}\2\d{5}|\d{13,19})(?![\d])/g,
    accept: isCardNumber,
  },
  // RFC 5321 bounds: local part ≤ 64, labels ≤ 63.
  email: {
    hint: '@',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b/g,
  },
  ipv4: {
    hint: /\d\.\d/,
    pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.]*\d)/g,
  },
  ipv6: {
    hint: /:[0-9A-Fa-f]{0,4}:/,
    pattern: /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})(?![\w:])/g,
    accept: (s) => isIPv6(s) && /[1-9a-f]/i.test(s),
  },
};

/** The default rules, in the order the contract lists them (contract/scrubbing.ts). */
export const defaultRules: readonly ScrubRule[] = defaultRuleNames.map((name) => ({ name, ...ruleOf[name] }));
