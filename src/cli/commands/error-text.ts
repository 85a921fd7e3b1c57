// How the error commands (errors.ts) print groups and events as text: one line each in lists, and
// a group's or an event's details, its frames innermost last as Node prints a stack.
import type { ErrorEvent, ErrorGroup, StackFrame } from '../../sdk/errors.ts';

export const groupLine = (g: ErrorGroup) =>
  `${g.uid}  ${g.state.padEnd(12)} ${String(g.occurrence_count).padStart(6)}× ${String(g.user_count).padStart(5)} users  last ${g.last_seen_time}  ${g.title.slice(0, 80)}  (etag ${g.etag})`;
export const eventLine = (e: ErrorEvent) =>
  `${e.uid}  ${e.event_time}  ${e.release ?? '-'}  ${e.exception_type}: ${(e.message ?? '').slice(0, 80)}`;
export const groupDetail = (g: ErrorGroup) =>
  [
    groupLine(g),
    `  culprit: ${g.culprit || '-'}`,
    `  first seen ${g.first_seen_time}, last release ${g.last_release || '-'}`,
    `  grouped by ${g.grouping.method}: ${g.grouping.frames.map((f) => `${f.function ?? '?'} (${f.file ?? '?'})`).join(' → ') || '-'}`,
  ].join('\n');
const frameLines = (frames: StackFrame[], indent: string): string[] =>
  frames
    .slice()
    .reverse()
    .map(
      (f) =>
        `${indent}at ${f.function ?? '<anonymous>'} (${f.file ?? '?'}:${f.line ?? '?'}:${f.column ?? '?'})${f.unmapped_reason ? ` [${f.unmapped_reason}]` : ''}`,
    );
// Linked exceptions print as Node prints them: `[cause]: Type: message`, indented under their parent.
const linkedLines = (e: ErrorEvent): string[] =>
  (e.linked_exceptions ?? []).flatMap((l, i, all) => {
    let depth = 1;
    for (let p = l.parent; p !== undefined && depth < 32; p = all[p]?.parent) depth++;
    const indent = '  '.repeat(depth);
    return [
      `${indent}[${l.source}]: ${l.exception_type}${l.message ? `: ${l.message.split('\n')[0]}` : ''}`,
      ...frameLines(l.stack_frames, `${indent}    `),
    ];
  });
export const eventDetail = (e: ErrorEvent) =>
  [
    eventLine(e),
    `  ${e.name}`,
    ...frameLines(e.stack_frames, '    '),
    ...linkedLines(e),
    ...(e.unparsed_line_count
      ? [
          `  ${e.unparsed_line_count} line(s) of the stack not understood: ${(e.unparsed_lines ?? [])
            .slice(0, 3)
            .map((l) => JSON.stringify(l.trim()))
            .join(', ')}`,
        ]
      : []),
  ].join('\n');
