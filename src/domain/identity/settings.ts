// Per-environment identity settings, kept under `identity` in envs.settings. Everything has a
// default, so a new environment signs users in with no set-up.
import { z } from 'zod';
import type { Db } from '../../db.ts';
import { isPlainTarget, originEntryProblem } from './redirects.ts';
import { tenancyQueries } from '../tenancy/queries.ts';

const colour = z.string().regex(/^#[0-9a-fA-F]{6}$/);

export const identitySettingsSchema = z.object({
  branding: z
    .object({
      name: z.string().max(100).optional(),
      logo_url: z.url({ protocol: /^https?$/ }).optional(),
      colors: z
        .object({ primary: colour.optional(), background: colour.optional(), text: colour.optional() })
        .optional(),
    })
    .default({}),
  /** Users must have a second factor; the minimum password length drops to 8 (NIST SP 800-63B). */
  require_second_factor: z.boolean().default(false),
  /** Clerk's defaults: a session ends after 7 days without use, and after 30 days in any case. */
  session_idle_seconds: z
    .number()
    .int()
    .min(300)
    .max(90 * 86400)
    .default(7 * 86400),
  session_lifetime_seconds: z
    .number()
    .int()
    .min(300)
    .max(365 * 86400)
    .default(30 * 86400),
  /**
   * Origins a redirect target may be on (redirects.ts decides); empty means only the portal's own
   * pages, and in a test environment also http://localhost and http://127.0.0.1.
   */
  redirect_origins: z
    .array(
      z
        .string()
        .max(300)
        .superRefine((v, ctx) => {
          const problem = originEntryProblem(v);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
    )
    .max(50)
    .default([]),
  /** Exact URLs a redirect target may also be, for an app that wants no more than these. */
  redirect_urls: z
    .array(
      z
        .url({ protocol: /^https?$/ })
        .max(2048)
        .refine(isPlainTarget, 'must be an http(s) URL without spaces, backslashes, user name or password'),
    )
    .max(50)
    .default([]),
  /** The HIBP range API as a third breached-password source; off by default (offline first). */
  breached_api: z
    .object({ enabled: z.boolean().default(false), fail: z.enum(['open', 'closed']).default('closed') })
    .default({ enabled: false, fail: 'closed' }),
  /** Per-IP limits overriding limits.ts's defaults, e.g. {"sign_in": {"points": 100, "seconds": 60}}. */
  rate_limits: z
    .partialRecord(
      z.enum(['sign_in', 'sign_up', 'password_reset', 'verify_email', 'redeem']),
      z.object({ points: z.number().int().min(1).max(1_000_000), seconds: z.number().int().min(1).max(86_400) }),
    )
    .default({}),
});

export type IdentitySettings = z.infer<typeof identitySettingsSchema>;

/** Stores the settings under `identity`, leaving other areas' keys of envs.settings alone. */
export async function saveIdentitySettings(db: Db, envId: string, settings: IdentitySettings): Promise<void> {
  await tenancyQueries(db).saveAreaSettings(envId, 'identity', settings);
}

/**
 * Entries stored before the list rules were tightened are dropped on read, not the whole object:
 * falling back to the defaults would also drop branding and require_second_factor.
 */
function withoutStaleTargets(stored: unknown): unknown {
  if (typeof stored !== 'object' || stored === null) return stored;
  const s = stored as Record<string, unknown>;
  const keep = (list: unknown, ok: (v: string) => boolean) =>
    Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string' && ok(v)) : list;
  return {
    ...s,
    ...('redirect_origins' in s
      ? { redirect_origins: keep(s.redirect_origins, (v) => originEntryProblem(v) === undefined) }
      : {}),
    ...('redirect_urls' in s ? { redirect_urls: keep(s.redirect_urls, isPlainTarget) } : {}),
  };
}

export function identitySettings(envSettings: Record<string, unknown> | undefined): IdentitySettings {
  const parsed = identitySettingsSchema.safeParse(withoutStaleTargets(envSettings?.identity ?? {}));
  // Settings are written through the schema; a bad stored value falls back to the defaults.
  return parsed.success ? parsed.data : identitySettingsSchema.parse({});
}
