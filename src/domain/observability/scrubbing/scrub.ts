// Applies an environment's scrubbing policy to text and key/value pairs, counting what each rule
// replaced ("the event records how many values each rule replaced").
import { z } from 'zod';
import { defaultRuleNames, defaultRules, filtered, sensitiveKeyPattern, type ScrubRule } from './rules.ts';

export const scrubbingPolicy = z
  .strictObject({
    /** The default rules are on unless a policy turns them off (CONTRACT.md). */
    use_default_rules: z.boolean().default(true),
    /** Default rules to skip, e.g. `ipv4` for a service whose messages name its own hosts. */
    disabled_rules: z
      .array(z.enum(['sensitive_key', ...defaultRuleNames] as [string, ...string[]]))
      .max(32)
      .default([]),
    /** More key names whose values are always replaced in tags and breadcrumb data (case-insensitive). */
    sensitive_keys: z.array(z.string().min(1).max(64)).max(100).default([]),
  })
  .meta({ id: 'ScrubbingPolicy' });

export type ScrubbingPolicy = z.infer<typeof scrubbingPolicy>;

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
   * from, not who ran it, and scrubbing it breaks reading the frame (CONTRACT.md "Sentry
   * compatibility"); secrets in its query string or path are still replaced.
   */
  location(value: string): string;
  /** A value under a key: the whole value goes when the key is sensitive, else its secrets. */
  keyed(key: string, value: string): string;
  counts(): ScrubCounts;
  /** Counts what scrubbing a value elsewhere counted (a stack the worker had made before, StackCache). */
  absorb(counts: ScrubCounts): void;
}

function replaceSecrets(value: string, rule: ScrubRule, bump: () => void): string {
  if (rule.hint !== undefined && !(typeof rule.hint === 'string' ? value.includes(rule.hint) : rule.hint.test(value)))
    return value;
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

export function compilePolicy(policy: ScrubbingPolicy, id = 0): CompiledPolicy {
  const rules = policy.use_default_rules ? defaultRules.filter((r) => !policy.disabled_rules.includes(r.name)) : [];
  const extraKeys = new Set(policy.sensitive_keys.map((k) => k.toLowerCase()));
  const keyRule = policy.use_default_rules && !policy.disabled_rules.includes('sensitive_key');
  const locationRules = rules.filter((r) => !hostRules.has(r.name));
  const memo = new Map<string, { out: string; fired: number[] }>();
  const locationMemo = new Map<string, { out: string; fired: number[] }>();
  return {
    id,
    scrubber(): Scrubber {
      const counts: ScrubCounts = {};
      const count = (name: string) => {
        counts[name] = (counts[name] ?? 0) + 1;
      };
      const apply = (value: string, fired?: number[], using: readonly ScrubRule[] = rules): string => {
        let out = value;
        for (let i = 0; i < using.length; i++) {
          out = replaceSecrets(out, using[i]!, () => {
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
          if (value !== filtered && (extraKeys.has(key.toLowerCase()) || (keyRule && sensitiveKeyPattern.test(key)))) {
            count('sensitive_key');
            return filtered;
          }
          return text(value);
        },
        counts: () => ({ ...counts }),
        absorb(more) {
          for (const name in more) counts[name] = (counts[name] ?? 0) + more[name]!;
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
