// The project runs on Node 24 LTS (package.json engines, and the `node` devDependency puts it
// first on npm's PATH). A silent fall-back to the system's Node 20 must fail loudly here.
import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs on Node 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });
});
