// GET /docs and /docs/{name}: the project's documents (docs.ts), listed and shown as pages
// (views/docs.ts). A name is looked up in the table read at start, never joined to a file path, so
// `/docs/..%2fpackage.json` (or any name not listed) is the 404 page.
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute } from '../../http/route.ts';
import { docNamed, docs } from '../docs.ts';
import { consolePublicPage } from '../page.ts';
import { render } from '../render.ts';
import { docNotFoundView, docsListView, docView } from '../views/docs.ts';

const docsPage = { ...consolePublicPage, tags: ['Site'], method: 'get' } as const;
const segment = z.string().max(100);

function showDoc(ctx: Context, deps: AppDeps, name: string): undefined {
  const doc = docNamed(name);
  if (!doc) return render(ctx, deps, { title: 'Not found', site: 'docs', status: 404, body: docNotFoundView() });
  return render(ctx, deps, { title: doc.title, site: 'docs', body: docView(doc) });
}

export const docsList = defineRoute({
  ...docsPage,
  path: '/docs',
  operationId: 'docsList',
  summary: "The list of the project's documents",
  handle: ({ deps, ctx }) => render(ctx, deps, { title: 'Docs', site: 'docs', body: docsListView(docs) }),
});

export const docPage = defineRoute({
  ...docsPage,
  path: '/docs/{name}',
  operationId: 'docPage',
  summary: 'One document of docs/ (its markdown, as written)',
  params: z.object({ name: segment }),
  handle: ({ params, deps, ctx }) => showDoc(ctx, deps, params.name),
});

export const docPartPage = defineRoute({
  ...docsPage,
  path: '/docs/{folder}/{name}',
  operationId: 'docPartPage',
  summary: 'One document of a folder of docs/ (docs/architecture/)',
  params: z.object({ folder: segment, name: segment }),
  handle: ({ params, deps, ctx }) => showDoc(ctx, deps, `${params.folder}/${params.name}`),
});
