// What a Sentry SDK's event brought, readable on the event resource under the names Sentry's own
// event JSON gives them (https://develop.sentry.dev/sdk/data-model/event-payloads/): `level`,
// `server_name`, `user`, `request`, `contexts`… as top-level members, beside the `sentry` object
// that has held them since Cairn first kept them (still answered, for the clients that read it).
// Both are views of the one stored, scrubbed `sentry` object: events stored before these names
// were answered carry them too.
import { z } from 'zod';

const bag = z.record(z.string(), z.unknown());

/** The members, each as Cairn keeps it (sentry/event.ts `SentryParts`), absent when the SDK sent none. */
export const sentryEventFields = {
  level: z.string().optional().meta({ description: "Sentry's level as the SDK sent it: fatal, error, warning, info…" }),
  platform: z.string().optional(),
  logger: z.string().optional(),
  environment: z.string().optional(),
  dist: z.string().optional(),
  server_name: z.string().optional(),
  user: bag.optional(),
  request: bag.optional().meta({ description: 'The HTTP request, headers as an object' }),
  contexts: bag.optional().meta({ description: 'os, browser, runtime, device, app, trace, and any other context' }),
  extra: bag.optional(),
  sdk: z.object({ name: z.string().optional(), version: z.string().optional() }).optional(),
};

/** The members an event resource shows of its stored `sentry` object (domain/errors/groups/present.ts). */
export type SentryEventFields = { [K in keyof typeof sentryEventFields]?: z.input<(typeof sentryEventFields)[K]> };
