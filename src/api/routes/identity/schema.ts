// Request and response schemas of the identity routes (CONTRACT.md "Identity").
import { z } from 'zod';
import { envParams } from '../tenancy/schema.ts';
import { maxPasswordLength } from '../../../domain/identity/passwords.ts';

export const email = z.email().max(320);
// The policy's minimum depends on the environment and is checked by the domain; this only bounds.
export const password = z
  .string()
  .min(1)
  .max(maxPasswordLength * 4);
export const redirectUrl = z.string().max(2048);

export const endUserParams = envParams.extend({
  end_user: z.string().regex(/^eu_[0-9a-z]{26}$/, 'an end user id, eu_…'),
});

export const pageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50),
  page_token: z.string().max(500).optional(),
});

export const endUser = z
  .object({
    name: z.string().meta({ example: 'orgs/acme/projects/shop/envs/prod/end_users/eu_01jd…' }),
    id: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    has_password: z.boolean(),
    totp_enabled: z.boolean(),
    create_time: z.string(),
    update_time: z.string(),
    last_sign_in_time: z.string().nullable(),
  })
  .meta({ id: 'EndUser' });

export const session = z
  .object({
    name: z.string(),
    id: z.string(),
    end_user_id: z.string(),
    state: z.enum(['active', 'revoked', 'expired']),
    method: z.string(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    create_time: z.string(),
    last_active_time: z.string(),
    idle_expire_time: z.string(),
    expire_time: z.string(),
    revoke_time: z.string().nullable(),
  })
  .meta({ id: 'Session' });

export const signIn = z
  .object({
    id: z.string(),
    time: z.string(),
    method: z.string(),
    outcome: z.string(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .meta({ id: 'SignIn' });

export const sessionAnswer = z
  .object({ session, user: endUser, session_token: z.string() })
  .meta({ id: 'SessionWithToken' });

export const factorProof = z.object({ type: z.enum(['totp', 'recovery_code']), code: z.string().min(1).max(64) });

export const accepted = z.object({ accepted: z.literal(true) });
