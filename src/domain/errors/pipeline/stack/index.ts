// Reading `Error.stack` as every engine prints it (docs/api.md "Capture fields and capture rules", rule 1; "Stacks").
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
