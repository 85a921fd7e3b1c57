// Reading `Error.stack` as every engine prints it (SPEC.md capture rule 1; docs/api.md "Stacks").
export { parseFrameLine, type ParsedFrame } from './frame-line.ts';
export {
  maxFrames,
  maxLinked,
  parseStack,
  parseStackBody,
  parseStackTrace,
  splitStack,
  type LinkedException,
  type ParsedException,
  type ParsedStack,
  type StackHint,
} from './parse.ts';
