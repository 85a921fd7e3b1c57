// The environment's error settings (docs/api.md "Retention", "Backpressure"): how many days events
// are kept after their receipt, and how many accepted events may wait unprocessed. GET answers the
// defaults until a PUT changes them; a PUT changes only the fields it sends.
import * as retentionQueries from '../../../domain/errors/retention/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams, errorSettingsBody, errorSettingsResource } from '../../../contract/errors.ts';
import { errorSettingsView } from '../../../domain/errors/retention/present.ts';
import { secretKey } from '../route-parts.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/error_settings';

export const getErrorSettings = defineRoute({
  method: 'get',
  path,
  operationId: 'getErrorSettings',
  summary: "The environment's event retention and intake bound",
  ...secretKey('Error tracking', 'observability:read'),
  params: envParams,
  response: { status: 200, description: 'The settings (the defaults until changed)', schema: errorSettingsResource },
  async handle({ principal, deps }) {
    return errorSettingsView(principal.envName, await retentionQueries.errorSettings(deps.db, principal.envId));
  },
});

export const putErrorSettings = defineRoute({
  method: 'put',
  path,
  operationId: 'putErrorSettings',
  summary: 'Change the retention (1-400 days) or the intake bound (1,000-10,000,000 events)',
  ...secretKey('Error tracking', 'observability:write'),
  params: envParams,
  body: errorSettingsBody,
  example: { retention_days: 30, max_pending: 250000 },
  response: { status: 200, description: 'The settings as stored', schema: errorSettingsResource },
  async handle({ body, principal, deps }) {
    const current = await retentionQueries.errorSettings(deps.db, principal.envId);
    const next = {
      retention_days: body.retention_days ?? current.retention_days,
      max_pending: body.max_pending ?? current.max_pending,
    };
    const updateTime = await retentionQueries.putErrorSettings(deps.db, principal.envId, next);
    return errorSettingsView(principal.envName, { ...next, update_time: updateTime });
  },
});

export const errorSettingsRoutes = [getErrorSettings, putErrorSettings];
