// Names from the minified file, on a real bundle nobody here wrote: jQuery 3.7.1 as published
// (dist/jquery.min.js and its map, which has no `sourcesContent`). Every call site in the minified
// code that lies inside a named function of the original jquery.js is a frame; the truth is that
// function's name in jquery.js. Cairn names each frame from the map alone (the name of the token at
// the position: a call site's callee) and with the minified file uploaded (the function around the
// position, its name mapped through the map).
import { describe, expect, it } from 'vitest';
import { CompactMap } from '../../../src/domain/errors/source-maps/compact-map.ts';
import { indexMinified } from '../../../src/domain/errors/source-maps/scope-naming.ts';
import { symbolicateFrame, type MapRef } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { callSites, mapJson, minifiedText, url } from './support.ts';

describe('names from the minified file (jQuery 3.7.1)', () => {
  it('names frames by the enclosing function where the map alone names the call site', async () => {
    const map = new CompactMap(mapJson);
    expect(map.original('jquery.js')).toBeNull(); // the published map has no sourcesContent
    const sites = await callSites(map);
    const ref: MapRef = {
      file: url,
      file_path: '/jquery/3.7.1/jquery.min.js',
      sha256: 'map',
      size_bytes: mapJson.length,
      object_key: 'map',
    };
    const withMinified: MapRef = {
      ...ref,
      minified: { sha256: 'min', object_key: 'min', size_bytes: minifiedText.length },
    };
    map.minified.set('min', Promise.resolve(indexMinified(minifiedText, url)));
    const load = async () => map;
    let before = 0;
    let after = 0;
    const wrong: string[] = [];
    for (const s of sites) {
      const frame = { file: url, line: s.line, column: s.column, function: 'x' };
      if ((await symbolicateFrame(frame, 'r1', [ref], load)).function === s.truth) before++;
      const named = (await symbolicateFrame(frame, 'r1', [withMinified], load)).function;
      if (named === s.truth) after++;
      else wrong.push(`${s.line}:${s.column} ${s.truth} ≠ ${named}`);
    }
    console.log(
      `jQuery call sites in named functions: ${sites.length}; right from the map alone: ${before}; with the minified file: ${after}`,
    );
    expect(sites.length).toBeGreaterThan(1000);
    // The map alone names the callee at the call site, almost never the function around it.
    expect(before / sites.length).toBeLessThan(0.05);
    // What stays wrong is what the minified file cannot tell: functions the minifier inlined into
    // their caller (ajaxConvert and ajaxHandleResponses into done, getDefaultDisplay into showHide)
    // and declarations it moved into anonymous expressions (defaultPrefilter into `prefilters:[…]`).
    expect(after / sites.length).toBeGreaterThan(0.95);
    expect(wrong.every((w) => !/≠ (undefined|x)$/.test(w))).toBe(true);
  });
});
