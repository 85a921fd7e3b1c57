// GET /: the service's landing page (views/landing.ts), in the console's look. Only `/` itself:
// every other path keeps its own route, and an unknown one its JSON 404.
import { defineRoute } from '../../http/route.ts';
import { consolePublicPage } from '../page.ts';
import { render } from '../render.ts';
import { landingView } from '../views/landing.ts';

export const landingPage = defineRoute({
  ...consolePublicPage,
  tags: ['Site'],
  method: 'get',
  path: '/',
  operationId: 'landingPage',
  summary: 'The landing page: links to the console, the documents and the health check',
  handle: ({ deps, ctx }) => render(ctx, deps, { title: 'Home', site: 'home', body: landingView() }),
});
