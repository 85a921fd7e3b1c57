// A stack as the console shows it: innermost frame first (as Sentry and GlitchTip show it), each
// with its original file:line:column and function, the code around it (from the map's sources, or
// as the SDK sent it for a frame no map mapped) with the frame's own line marked, the minified
// frame behind a disclosure (one click away), and why a frame could not be mapped.
import type { StackFrame, UnmappedReason } from '../../domain/errors/pipeline/symbolicate.ts';
import { html, type Html } from '../../html/html.ts';

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

/** The frame's code, its own line marked; numbered from the frame's line when it has one. */
function context(f: StackFrame): Html | '' {
  if (f.context_line === undefined) return '';
  const at = f.pre_context?.length ?? 0;
  const lines = [...(f.pre_context ?? []), f.context_line, ...(f.post_context ?? [])];
  const number = (i: number) => (f.line === undefined ? '' : html`<span class="ln">${f.line - at + i}</span>`);
  return html`<pre class="code">${lines.map(
    (l, i) => html`<span${i === at ? html` class="hit"` : ''}>${number(i)}${l}
</span>`,
  )}</pre>`;
}

function frame(f: StackFrame): Html {
  const g = f.generated;
  const library = f.in_app ? '' : html` <span class="tag">library</span>`;
  const fn = html`<code class="fn">${f.function ?? '(anonymous)'}</code>`;
  const unmapped = f.unmapped_reason
    ? html`<p class="muted">Not mapped: ${unmappedReasons[f.unmapped_reason]}.</p>`
    : '';
  const generated = g ? html`<code>${g.function ?? '(anonymous)'} at ${where(g)}</code>` : '';
  const minified = g ? html`<details><summary>Minified frame</summary>${generated}</details>` : '';
  return html`<li class="frame${f.in_app ? ' app' : ''}">
<div>${fn} <span class="muted">at</span> <code>${where(f)}</code>${library}</div>
${context(f)}
${unmapped}
${minified}
</li>`;
}

export function stackFrames(frames: readonly StackFrame[]): Html {
  if (frames.length === 0) return html`<p class="muted">No stack frames.</p>`;
  return html`<ol class="frames">${[...frames].reverse().map(frame)}</ol>`;
}
