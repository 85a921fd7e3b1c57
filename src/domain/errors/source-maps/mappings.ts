// A source map's `mappings` (ECMA-426 §5: Base64 VLQ, `,` between segments, `;` between generated
// lines) decoded straight into columns of typed arrays. Going through @jridgewell/sourcemap-codec's
// `decode` first costs a small JS array per segment, ~7.7× the map's JSON on the V8 heap: a 50 MiB
// upload would need ~400 MB, over the worker's 128 MB old space. Typed arrays' backing stores live
// outside that heap, and nothing else is allocated per segment.
//
// Two passes: count (one `,`/`;` scan, exact for well-formed input), then fill. The fill mirrors
// sourcemap-codec 1.6's `decode` step for step (the same character table, sign rule and segment
// boundaries, and a line sorted by generated column when it is not), so lookups answer what
// trace-mapping answers, malformed input included (a mangled line may hold more segments than the
// count said: the arrays then grow).

export interface Columns {
  /** Segments of generated line i are [lineStart[i], lineStart[i + 1]). */
  lineStart: Int32Array;
  genColumn: Int32Array;
  /** -1: a segment with no original position. */
  source: Int32Array;
  srcLine: Int32Array;
  srcColumn: Int32Array;
  /** -1: no name. */
  name: Int32Array;
}

const comma = 44;
const semicolon = 59;
const charToInt = new Uint8Array(128);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((c, i) => {
  charToInt[c.charCodeAt(0)] = i;
});

// sourcemap-codec's rule, `-0` (1) included: it decodes to -2^31.
const decodeSign = (n: number): number => (n & 1 ? -0x80000000 | -(n >>> 1) : n >>> 1);

const fields = ['genColumn', 'source', 'srcLine', 'srcColumn', 'name'] as const;

function allocate(lines: number, segments: number): Columns {
  return {
    lineStart: new Int32Array(lines + 1),
    genColumn: new Int32Array(segments),
    source: new Int32Array(segments),
    srcLine: new Int32Array(segments),
    srcColumn: new Int32Array(segments),
    name: new Int32Array(segments),
  };
}

function grow(c: Columns): Columns {
  const next = allocate(c.lineStart.length - 1, Math.max(16, Math.ceil(c.genColumn.length * 1.5)));
  next.lineStart.set(c.lineStart);
  for (const f of fields) next[f].set(c[f]);
  return next;
}

/** Stable sort of one line's segments by generated column (rare: bundlers emit them in order). */
function sortLine(c: Columns, from: number, to: number): void {
  const order = Array.from({ length: to - from }, (_, k) => from + k).sort((a, b) => c.genColumn[a]! - c.genColumn[b]!);
  for (const f of fields) {
    const copy = order.map((i) => c[f][i]!);
    c[f].set(copy, from);
  }
}

export function decodeMappings(mappings: string): Columns {
  const length = mappings.length;
  let lines = 1;
  let segments = 0;
  let inSegment = false;
  for (let i = 0; i < length; i++) {
    const ch = mappings.charCodeAt(i);
    if (ch === semicolon) {
      lines += 1;
      inSegment = false;
    } else if (ch === comma) {
      inSegment = false;
    } else if (!inSegment) {
      segments += 1;
      inSegment = true;
    }
  }
  let c = allocate(lines, segments);
  let pos = 0;
  let at = 0;
  let sourcesIndex = 0;
  let sourceLine = 0;
  let sourceColumn = 0;
  let namesIndex = 0;
  const int = (): number => {
    let value = 0;
    let shift = 0;
    let digit: number;
    do {
      // Past the end or outside the table: `undefined`, which ends the integer as sourcemap-codec does.
      digit = charToInt[mappings.charCodeAt(pos++)]!;
      value |= (digit & 31) << shift;
      shift += 5;
    } while (digit & 32);
    return decodeSign(value);
  };
  for (let line = 0; line < lines; line++) {
    let semi = mappings.indexOf(';', pos);
    if (semi === -1) semi = length;
    c.lineStart[line] = at;
    let genColumn = 0;
    let sorted = true;
    while (pos < semi) {
      if (at === c.genColumn.length) c = grow(c);
      const last = genColumn;
      genColumn += int();
      if (genColumn < last) sorted = false;
      c.genColumn[at] = genColumn;
      if (pos < semi && mappings.charCodeAt(pos) !== comma) {
        sourcesIndex += int();
        sourceLine += int();
        sourceColumn += int();
        c.source[at] = sourcesIndex;
        c.srcLine[at] = sourceLine;
        c.srcColumn[at] = sourceColumn;
        if (pos < semi && mappings.charCodeAt(pos) !== comma) {
          namesIndex += int();
          c.name[at] = namesIndex;
        } else {
          c.name[at] = -1;
        }
      } else {
        c.source[at] = -1;
        c.name[at] = -1;
      }
      at += 1;
      pos += 1;
    }
    if (!sorted) sortLine(c, c.lineStart[line]!, at);
    pos = semi + 1;
  }
  c.lineStart[lines] = at;
  return c;
}

/** Mappings given as decoded arrays (TraceMap accepts them too): lines of [column, source, line, column, name?]. */
export function fromDecoded(lines: unknown[]): Columns {
  const rows = lines.map((line) => {
    if (!Array.isArray(line)) throw new Error('a decoded mappings line is not an array');
    return line.map((seg) => {
      if (!Array.isArray(seg) || seg.length === 0 || !seg.every((x) => typeof x === 'number'))
        throw new Error('a decoded segment is not numbers');
      return seg as number[];
    });
  });
  const c = allocate(
    rows.length,
    rows.reduce((a, l) => a + l.length, 0),
  );
  let at = 0;
  rows.forEach((line, i) => {
    c.lineStart[i] = at;
    for (const seg of line) {
      c.genColumn[at] = seg[0]!;
      c.source[at] = seg.length > 1 ? seg[1]! : -1;
      c.srcLine[at] = seg[2] ?? 0;
      c.srcColumn[at] = seg[3] ?? 0;
      c.name[at] = seg.length === 5 ? seg[4]! : -1;
      at += 1;
    }
    let sorted = true;
    for (let k = c.lineStart[i]! + 1; k < at; k++) if (c.genColumn[k]! < c.genColumn[k - 1]!) sorted = false;
    if (!sorted) sortLine(c, c.lineStart[i]!, at);
  });
  c.lineStart[rows.length] = at;
  return c;
}
