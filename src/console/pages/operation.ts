// /console/operations/{id}: a restore's (or drill's) progress until done (views/operation.ts),
// with the page's own script refreshing it while it runs.
import { getOperation } from '../../domain/backups/restore/request.ts';
import { AppError } from '../../app-error.ts';
import { defineRoute } from '../../http/route.ts';
import { consoleItemPage } from '../page.ts';
import { render } from '../render.ts';
import { isDone, liveProgress, operationTitle, operationView } from '../views/operation.ts';

const operationId = /^op_[0-9a-z]{26}$/;

export const consoleOperation = defineRoute({
  ...consoleItemPage('/console/operations/{id}', 'consoleOperation', 'backups:read'),
  summary: "A restore's progress",
  async handle({ params, principal, deps, ctx }) {
    if (!operationId.test(params.id)) throw new AppError('not_found', 'There is no such operation.');
    const { op, targetName } = await getOperation(deps.db, principal.envId, params.id);
    const data = { op, targetName };
    return render(ctx, deps, {
      title: operationTitle(data),
      principal,
      section: 'backups',
      script: isDone(op) ? undefined : liveProgress,
      body: operationView(data),
    });
  },
});
