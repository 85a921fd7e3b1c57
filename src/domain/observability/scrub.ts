// Applies an environment's scrubbing policy to text and key/value pairs, counting what each rule
// replaced (issue 3: "the event records how many values each rule replaced").
import { z } from 'zod';
import { defaultRuleNames, defaultRules, filtered, sensitiveKeyPattern, type ScrubRule } from './scrub-rules.ts';

export const scrubbingPolicy = z
  .strictObject({
    /** The default rules are on unless a policy turns them off (CONTRACT.md). */
    use_default_rules: z.boolean().default(true),
    /** Default rules to skip, e.g. `ipv4` for a service whose messages name its own hosts. */
    disabled_rules: z.array(z.enum(['sensitive_key', ...defaultRuleNames] as [string, ...string[]])).max(32).default([]),
    /** More key names whose values are always replaced in tags and breadcrumb data (case-insensitive). */
    sensitive_keys: z.array(z.string().min(1).max(64)).max(100).default([]),
  })
  .meta({ id: 'ScrubbingPolicy' });

export type ScrubbingPolicy = z.infer<typeof scrubbingPolicy>;

export const defaultPolicy: ScrubbingPolicy = Object.freeze({ use_default_rules: true, disabled_rules: [], sensitive_keys: [] });

export type ScrubCounts = Record<string, number>;

export interface Scrubber {
  text(value: string): string;
  /** A value under a key: the whole value goes when the key is sensitive, else its secrets. */
  keyed(key: string, value: string): string;
  counts(): ScrubCounts;
}

function replaceSecrets(value: string, rule: ScrubRule, bump: () => void): string {
  if (rule.hint !== undefined && !(typeof rule.hint === 'string' ? value.includes(rule.hint) : rule.hint.test(value))) return value;
  rule.pattern.lastIndex = 0;
  return value.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
    // The rule's groups cover the whole match (prefix, secret, suffix), so a match rebuilds exactly.
    const groups = rest.slice(0, rest.findIndex((v) => typeof v === 'number')) as (string | undefined)[];
    const secret = rule.group ? (groups[rule.group - 1] ?? '') : match;
    if (rule.accept && !rule.accept(secret)) return match;
    bump();
    if (!rule.group) return filtered;
    return groups.map((g, i) => (i === rule.group! - 1 ? filtered : (g ?? ''))).join('');
  });
}

export function createScrubber(policy: ScrubbingPolicy): Scrubber {
  const rules = policy.use_default_rules ? defaultRules.filter((r) => !policy.disabled_rules.includes(r.name)) : [];
  const extraKeys = new Set(policy.sensitive_keys.map((k) => k.toLowerCase()));
  const keyRule = policy.use_default_rules && !policy.disabled_rules.includes('sensitive_key');
  const counts: ScrubCounts = {};
  const bump = (name: string) => () => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  const bumps = rules.map((rule) => bump(rule.name));
  const text = (value: string): string => {
    let out = value;
    for (let i = 0; i < rules.length; i++) out = replaceSecrets(out, rules[i]!, bumps[i]!);
    return out;
  };
  return {
    text,
    keyed(key, value) {
      if (value !== filtered && (extraKeys.has(key.toLowerCase()) || (keyRule && sensitiveKeyPattern.test(key)))) {
        bump('sensitive_key')();
        return filtered;
      }
      return text(value);
    },
    counts: () => ({ ...counts }),
  };
}
