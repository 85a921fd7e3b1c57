// An environment's scrubbing policy (docs/api.md "[Filtered]"), as stored and answered, and the
// names of the default rules it may turn off (the rules themselves: domain/errors/scrubbing/rules.ts).
import { z } from 'zod';

/** The default rules, in the order they run and are listed. */
export const defaultRuleNames = [
  'pem_private_key',
  'jwt',
  'cairn_secret_key',
  'aws_access_key',
  'bearer',
  'basic_auth',
  'url_password',
  'query_secret',
  'secret_key_value',
  'credit_card',
  'email',
  'ipv4',
  'ipv6',
] as const;

export type DefaultRuleName = (typeof defaultRuleNames)[number];

export const scrubbingPolicy = z
  .strictObject({
    /** The default rules are on unless a policy turns them off (docs/api.md). */
    use_default_rules: z.boolean().default(true),
    /** Default rules to skip, e.g. `ipv4` for a service whose messages name its own hosts. */
    disabled_rules: z
      .array(z.enum(['sensitive_key', ...defaultRuleNames] as [string, ...string[]]))
      .max(32)
      .default([]),
    /**
     * More key names whose values are always replaced, at any depth and in query strings
     * (case-insensitive, the whole name).
     */
    sensitive_keys: z.array(z.string().min(1).max(64)).max(100).default([]),
  })
  .meta({ id: 'ScrubbingPolicy' });

export type ScrubbingPolicy = z.infer<typeof scrubbingPolicy>;
