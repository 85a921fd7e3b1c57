// What the pipeline keeps between events, owned by the worker that runs it and passed in: compiled
// scrubbing policies (with their string memo), ready stacks, and the stack encoder's buffer. The
// stages themselves keep nothing, so a test or a second worker in one process starts clean.
import { PolicyCache } from '../scrubbing/scrub.ts';
import { StackEncoder } from './event-codec.ts';
import { StackCache } from './stack-cache.ts';

export interface PipelineCaches {
  policies: PolicyCache;
  stacks: StackCache;
  encoder: StackEncoder;
}

export function createPipelineCaches(): PipelineCaches {
  return { policies: new PolicyCache(), stacks: new StackCache(), encoder: new StackEncoder() };
}
