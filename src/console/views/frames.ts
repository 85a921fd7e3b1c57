// A stack as the console shows it: innermost frame first (as Sentry and GlitchTip show it), each
// with its original file:line:column and function, the code around it (from the map's sources, or
// as the SDK sent it for a frame no map mapped) numbered with the frame's own line marked, and the
// minified frame behind a disclosure (one click away).
//
// Frames not in the application (libraries, the runtime) are folded, each run of consecutive ones
// behind one "N frames not in app" disclosure, as Sentry collapses them: the application's frames
// are what a reader looks for. A stack with no in-app frame at all is shown whole, since folding it
// would hide everything. Why frames were not mapped is said once above the stack, not under each
// frame: most stacks that are not mapped are not mapped for one reason (no release, no maps).
import type { StackFrame, UnmappedReason } from '../../domain/errors/pipeline/symbolicate.ts';
import { html, type Html } from '../../html/html.ts';
import { plural } from '../format.ts';

/** Why a frame was not mapped, in words (the API gives the code: docs/api.md "Symbolication"). */
export const unmappedReasons: Record<UnmappedReason, string> = {
  no_release: 'the event names no release, so no source map applies',
  no_maps_for_release: 'no source maps were uploaded for this release',
  no_map_for_file: 'no source map of this release is for this file',
  no_position: 'the frame has no line and column to look up',
  position_outside_map: 'the position is outside its source map',
  malformed_map: 'the source map for this file could not be read as a source map',
  map_unavailable: 'the source map could not be read from the object store',
};

function where(f: { file?: string | undefined; line?: number | undefined; column?: number | undefined }): string {
  const line = f.line !== undefined ? `:${f.line}` : '';
  const column = f.column !== undefined ? `:${f.column}` : '';
  return `${f.file ?? '(unknown file)'}${line}${column}`;
}

/**
 * The frame's code, numbered from the frame's line when it has one. Its own line is a `<mark>`
 * (announced as highlighted) with a bar and bold text beside its background, so it is not told
 * by colour alone (WCAG 2.2 §1.4.1).
 */
function context(f: StackFrame): Html | '' {
  if (f.context_line === undefined) return '';
  const at = f.pre_context?.length ?? 0;
  const lines = [...(f.pre_context ?? []), f.context_line, ...(f.post_context ?? [])];
  // Always a number cell (empty without a line), so wrapped code stays in its own column.
  const number = (i: number) => html`<span class="ln">${f.line === undefined ? '' : f.line - at + i}</span>`;
  return html`<pre class="code">${lines.map((l, i) =>
    i === at
      ? html`<mark class="hit">${number(i)}${l}
</mark>`
      : html`<span>${number(i)}${l}
</span>`,
  )}</pre>`;
}

/** `mixed`: some frames of the stack were mapped, so an unmapped one is marked as such. */
function frame(f: StackFrame, mixed: boolean): Html {
  const g = f.generated;
  const fn = html`<code class="fn">${f.function ?? '(anonymous)'}</code>`;
  const unmapped = mixed && f.unmapped_reason ? html` <span class="tag">not mapped</span>` : '';
  const generated = g ? html`<code>${g.function ?? '(anonymous)'} at ${where(g)}</code>` : '';
  const minified = g ? html`<details><summary>Minified frame</summary>${generated}</details>` : '';
  return html`<li class="frame${f.in_app ? ' app' : ''}">
<div>${fn} <span class="muted">at</span> <code>${where(f)}</code>${unmapped}</div>
${context(f)}
${minified}
</li>`;
}

/** Consecutive frames split into runs of in-app and not-in-app ones, in the order given. */
export function runs(frames: readonly StackFrame[]): { inApp: boolean; frames: StackFrame[] }[] {
  const out: { inApp: boolean; frames: StackFrame[] }[] = [];
  for (const f of frames) {
    const last = out.at(-1);
    if (last && last.inApp === f.in_app) last.frames.push(f);
    else out.push({ inApp: f.in_app, frames: [f] });
  }
  return out;
}

/** The one line that says why the stack's frames were not mapped, with counts when they differ. */
function unmappedNote(frames: readonly StackFrame[]): Html | '' {
  const counts = new Map<UnmappedReason, number>();
  for (const f of frames)
    if (f.unmapped_reason) counts.set(f.unmapped_reason, (counts.get(f.unmapped_reason) ?? 0) + 1);
  if (counts.size === 0) return '';
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const lead = total === frames.length ? 'Not mapped' : `${total} of ${plural(frames.length, 'frame')} not mapped`;
  const reasons = [...counts].map(([r, n]) =>
    counts.size === 1 ? unmappedReasons[r] : `${unmappedReasons[r]} (${n})`,
  );
  return html`<p class="muted unmapped">${lead}: ${reasons.join('; ')}.</p>`;
}

export function stackFrames(frames: readonly StackFrame[]): Html {
  if (frames.length === 0) return html`<p class="muted">No stack frames.</p>`;
  const innermostFirst = [...frames].reverse();
  const mixed = frames.some((f) => f.unmapped_reason) && frames.some((f) => !f.unmapped_reason);
  const fold = frames.some((f) => f.in_app);
  const items = runs(innermostFirst).map((r) =>
    r.inApp || !fold
      ? r.frames.map((f) => frame(f, mixed))
      : html`<li class="fold"><details><summary>${plural(r.frames.length, 'frame')} not in app</summary>
<ol class="frames">${r.frames.map((f) => frame(f, mixed))}</ol></details></li>`,
  );
  return html`${unmappedNote(frames)}<ol class="frames">${items}</ol>`;
}
