// koaPath (http/route.ts): contract paths as the router takes them. A declared final slash is left
// to the router, which answers the path with or without it (Sentry's ingest paths).
import { describe, expect, it } from 'vitest';
import { koaPath } from '../../src/http/route.ts';

describe('koaPath', () => {
  it('names parameters, escapes custom verbs, and leaves a final slash to the router', () => {
    expect(koaPath('/v1/{env}/error_groups:capture')).toBe('/v1/:env/error_groups\\:capture');
    expect(koaPath('/api/{project_id}/envelope/')).toBe('/api/:project_id/envelope');
    expect(koaPath('/healthz')).toBe('/healthz');
    expect(koaPath('/')).toBe('/');
  });
});
