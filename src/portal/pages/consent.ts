// POST /consent: the signed-in user allows or denies a device request (RFC 8628 §3.3).
import { decideDeviceRequest, findDeviceRequest } from '../../domain/oauth/device.ts';
import { AppError } from '../../app-error.ts';
import { clientFrom } from '../../http/client.ts';
import { browserId } from '../../http/csrf.ts';
import { csrfExample, formPost } from './form-post.ts';
import { envFromId, portalUser, render } from '../context.ts';
import * as v from '../views.ts';

export const consent = formPost('/consent', ['user_code', 'decision'], {
  operationId: 'consentForm',
  summary: 'Allow or deny a device request',
  example: { csrf: csrfExample, user_code: 'BDFG-HJKL', decision: 'approve' },
  async handle(f, deps, ctx) {
    const request = await findDeviceRequest(deps.db, f.user_code ?? '', {
      ip: clientFrom(ctx).ip,
      browser: browserId(ctx, deps.config),
    });
    const env = await envFromId(deps, request.env_id);
    const user = await portalUser(ctx, deps, env.envId);
    if (!user) throw new AppError('unauthorized', 'Your session ended; open the link on your device again.');
    const approve = f.decision === 'approve';
    await decideDeviceRequest(deps.db, request, user.id, approve);
    render(ctx, {
      env,
      title: approve ? 'Device connected' : 'Request denied',
      body: v.doneView(approve, request.client_name),
    });
    return undefined;
  },
});
