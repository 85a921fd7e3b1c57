// The caller's W3C `traceparent` header (https://www.w3.org/TR/trace-context/#traceparent-header):
// version-traceid-parentid-flags in lowercase hex. An all-zero id is invalid, and so is version
// ff; a later version may append fields after the flags, which we ignore as the spec asks.
import { isHexId } from '../ids.ts';

const shape = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-|$)/;

export function parseTraceparent(header: string | undefined): { traceId: string; spanId: string } | undefined {
  const m = shape.exec(header?.trim() ?? '');
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[4] === '-')) return undefined;
  const traceId = m[2]!;
  const spanId = m[3]!;
  return isHexId(traceId, 32) && isHexId(spanId, 16) ? { traceId, spanId } : undefined;
}
