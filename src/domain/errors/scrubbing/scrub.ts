// Applies an environment's scrubbing policy to text and key/value pairs, counting what each rule
// replaced ("the event records how many values each rule replaced").
import type { ScrubbingPolicy } from '../../../contract/scrubbing.ts';
import {
  defaultRules,
  filtered,
  isSecretParameter,
  parameterName,
  sensitiveKeyHint,
  sensitiveKeyPattern,
  type ScrubRule,
} from './rules.ts';

export type { ScrubbingPolicy };

export const defaultPolicy: ScrubbingPolicy = Object.freeze({
  use_default_rules: true,
  disabled_rules: [],
  sensitive_keys: [],
});

export type ScrubCounts = Record<string, number>;

export interface Scrubber {
  text(value: string): string;
  /**
   * `text` for strings that recur from event to event (a frame's file, function and context
   * lines): what it made of one is remembered. Never for messages and other one-off values,
   * which would only churn the memory.
   */
  recurring(value: string): string;
  /**
   * `recurring` for a code location (a frame's file and function): every rule but the host-name
   * ones. A host in a script's URL (`http://127.0.0.1:8080/app.js`) says where code was served
   * from, not who ran it, and scrubbing it breaks reading the frame (docs/api.md "Sentry
   * compatibility"); secrets in its query string or path are still replaced.
   */
  location(value: string): string;
  /** A value under a key: the whole value goes when the key is sensitive, else its secrets. */
  keyed(key: string, value: string): string;
  /**
   * Whether a value under this key goes whole, whatever it is (scrubbing/schema.ts): the
   * `sensitive_key` rule's names and the policy's own. Counts nothing.
   */
  sensitive(key: string): boolean;
  /**
   * False when no key of this JSON text can be sensitive (none of the names is in it, nor a
   * `\u` escape that could spell one): a cheap test before the text is parsed to read its keys.
   */
  mayHoldSensitiveKey(json: string): boolean;
  /** The marker a value under a sensitive key is replaced with, counted as `sensitive_key`. */
  redacted(): string;
  /** How many values have been replaced so far, by every rule. */
  replaced(): number;
  counts(): ScrubCounts;
  /** Counts what scrubbing a value elsewhere counted (a stack the worker had made before, StackCache). */
  absorb(counts: ScrubCounts): void;
}

/** Where a parameter's value ends: scanned to its real end, however long, so no tail of a secret stays. */
const valueEnd = (text: string, from: number): number => {
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // `&`, `#` and whitespace end a value, and so does `; ` (RFC 6265 §4.2.1: a Cookie header's separator).
    if (c === 38 || c === 35 || c === 32 || (c >= 9 && c <= 13)) break;
    if (c === 59 && /\s/.test(text[i + 1] ?? '')) break;
  }
  return i;
};

/**
 * The values of `name=value` parameters whose name is secret. A parameter whose name is not
 * secret is passed over but its value is still read for more (`?next=/a?token=x`), and each
 * value is read at most twice, so the cost stays linear.
 */
function replaceParameters(value: string, rule: ScrubRule, secretName: (name: string) => boolean, bump: () => void) {
  const names = rule.pattern;
  names.lastIndex = 0;
  let out = '';
  let last = 0;
  for (let m = names.exec(value); m !== null; m = names.exec(value)) {
    const from = names.lastIndex;
    if (!secretName(m[1]!) || value.startsWith(filtered, from)) continue;
    const end = valueEnd(value, from);
    if (end === from) continue;
    bump();
    out += value.slice(last, from) + filtered;
    last = end;
    names.lastIndex = end;
  }
  return last === 0 ? value : out + value.slice(last);
}

function replaceSecrets(
  value: string,
  rule: ScrubRule,
  secretName: (name: string) => boolean,
  bump: () => void,
): string {
  if (rule.hint !== undefined && !(typeof rule.hint === 'string' ? value.includes(rule.hint) : rule.hint.test(value)))
    return value;
  if (rule.parameters) return replaceParameters(value, rule, secretName, bump);
  rule.pattern.lastIndex = 0;
  return value.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
    // The rule's groups cover the whole match (prefix, secret, suffix), so a match rebuilds exactly.
    const groups = rest.slice(
      0,
      rest.findIndex((v) => typeof v === 'number'),
    ) as (string | undefined)[];
    const secret = rule.group ? (groups[rule.group - 1] ?? '') : match;
    if (rule.accept && !rule.accept(secret)) return match;
    bump();
    if (!rule.group) return filtered;
    return groups.map((g, i) => (i === rule.group! - 1 ? filtered : (g ?? ''))).join('');
  });
}

/** A policy made ready to apply: its rules, and what they did to strings seen before. */
export interface CompiledPolicy {
  /** Names this policy among those its cache holds (values scrubbed under it are kept under it). */
  readonly id: number;
  /** A scrubber for one event (or one stack), counting its replacements. */
  scrubber(): Scrubber;
}

// Frames of one release repeat the same file names, function names and context lines from stack
// to stack (a stack not seen before is scrubbed frame by frame): each policy remembers what it made of
// short strings (the result and which rules fired), bounded in entries.
const memoLimit = 20_000;
/** The rules that find host names and addresses, which a code location keeps (Scrubber.location). */
const hostRules = new Set(['ipv4', 'ipv6']);
const memoMaxLength = 512;

// A substring can keep its whole parent alive (V8 slices share it): a context line would pin the
// source text of a map long evicted from the cache. Remembered strings are copies.
const detached = (s: string): string => (s.length < 13 ? s : ` ${s}`.slice(1));

/** The policy's tests of key names: the `sensitive_key` rule's and the policy's own names. */
function keyTests(policy: ScrubbingPolicy) {
  const extraKeys = new Set(policy.sensitive_keys.map((k) => k.toLowerCase()));
  const keyRule = policy.use_default_rules && !policy.disabled_rules.includes('sensitive_key');
  const keyMemo = new Map<string, boolean>();
  const sensitive = (key: string): boolean => {
    let is = keyMemo.get(key);
    if (is === undefined) {
      is = extraKeys.has(key.toLowerCase()) || (keyRule && sensitiveKeyPattern.test(key));
      // Key names recur from event to event (headers, contexts): each policy remembers its verdicts.
      if (key.length <= 64) {
        if (keyMemo.size >= memoLimit) keyMemo.clear();
        keyMemo.set(detached(key), is);
      }
    }
    return is;
  };
  const mayHoldSensitiveKey = (json: string): boolean => {
    if ((keyRule && sensitiveKeyHint.test(json)) || json.includes('\\u')) return true;
    if (extraKeys.size === 0) return false;
    const lower = json.toLowerCase();
    for (const k of extraKeys) if (lower.includes(k)) return true;
    return false;
  };
  const secretName = (name: string) => isSecretParameter(name) || extraKeys.has(parameterName(name).toLowerCase());
  return { sensitive, mayHoldSensitiveKey, secretName };
}

export function compilePolicy(policy: ScrubbingPolicy, id = 0): CompiledPolicy {
  const rules = policy.use_default_rules ? defaultRules.filter((r) => !policy.disabled_rules.includes(r.name)) : [];
  const { sensitive, mayHoldSensitiveKey, secretName } = keyTests(policy);
  const locationRules = rules.filter((r) => !hostRules.has(r.name));
  const memo = new Map<string, { out: string; fired: number[] }>();
  const locationMemo = new Map<string, { out: string; fired: number[] }>();
  return {
    id,
    scrubber(): Scrubber {
      const counts: ScrubCounts = {};
      let total = 0;
      const count = (name: string) => {
        counts[name] = (counts[name] ?? 0) + 1;
        total++;
      };
      const apply = (value: string, fired?: number[], using: readonly ScrubRule[] = rules): string => {
        let out = value;
        for (let i = 0; i < using.length; i++) {
          out = replaceSecrets(out, using[i]!, secretName, () => {
            fired?.push(i);
            count(using[i]!.name);
          });
        }
        return out;
      };
      const text = (value: string): string => apply(value);
      const remembered =
        (seenBefore: Map<string, { out: string; fired: number[] }>, using: readonly ScrubRule[]) =>
        (value: string): string => {
          if (value.length > memoMaxLength) return apply(value, undefined, using);
          const seen = seenBefore.get(value);
          if (seen) {
            for (const i of seen.fired) count(using[i]!.name);
            return seen.out;
          }
          const fired: number[] = [];
          const out = apply(value, fired, using);
          if (seenBefore.size >= memoLimit) seenBefore.clear();
          const key = detached(value);
          seenBefore.set(key, { out: out === value ? key : detached(out), fired });
          return out;
        };
      return {
        text,
        recurring: remembered(memo, rules),
        location: remembered(locationMemo, locationRules),
        keyed(key, value) {
          if (value !== filtered && sensitive(key)) {
            count('sensitive_key');
            return filtered;
          }
          return text(value);
        },
        sensitive,
        mayHoldSensitiveKey,
        redacted() {
          count('sensitive_key');
          return filtered;
        },
        replaced: () => total,
        counts: () => ({ ...counts }),
        absorb(more) {
          for (const name in more) {
            counts[name] = (counts[name] ?? 0) + more[name]!;
            total += more[name]!;
          }
        },
      };
    },
  };
}

/**
 * The compiled policies a worker applies, shared by every event under each (a few are kept, the
 * oldest going first). One per worker, passed in with the pipeline's other caches.
 */
export class PolicyCache {
  private readonly compiled = new Map<string, CompiledPolicy>();
  private made = 0;

  get(policy: ScrubbingPolicy): CompiledPolicy {
    const key = JSON.stringify(policy);
    let c = this.compiled.get(key);
    if (!c) {
      if (this.compiled.size >= 8) this.compiled.delete(this.compiled.keys().next().value!);
      c = compilePolicy(policy, ++this.made);
      this.compiled.set(key, c);
    }
    return c;
  }
}

/** A scrubber of its own policy, for one value (tests, and one-off uses). */
export function createScrubber(policy: ScrubbingPolicy): Scrubber {
  return compilePolicy(policy).scrubber();
}
