// The programs whose uncaught errors Node prints itself, for engines.ts's uncaught().
// Node's own printout of an uncaught error or unhandled rejection (stderr): the header, the stack,
// own properties and causes, the trailer. The same program run with CORPUS_SITES=1 prints the
// error's CallSites instead; both throw from one line, so their frames are the same.
export const uncaughtPrograms = (set: string): Record<string, string> =>
  set === 'multiline'
    ? {
        'assert-diff.cjs': `
const assert = require('node:assert');
function checkTotals(order) { assert.deepStrictEqual(order, { total: 4, items: [1, 2], note: 'a\\nb {' }); }
run(() => checkTotals({ total: 3, items: [1, 2], note: 'a\\nb {' }));`,
        'props-braces.mjs': `
function save(row) { const e = new Error('insert failed:\\n  INSERT INTO t (a) VALUES ($1) {\\n}\\n    at fake (/x.js:1:2)'); e.code = '23505'; e.row = row; throw e; }
run(() => save({ a: 1 }));`,
      }
    : {
        'sync-cause.cjs': `
function parse(text) { return JSON.parse(text); }
function loadConfig() {
  try { parse('{oops'); } catch (e) { const err = new Error('config unreadable', { cause: e }); err.code = 'E_CONFIG'; err.path = '/etc/app.json'; throw err; }
}
run(loadConfig);`,
        'esm-plain.mjs': `
function checkout(cart) { return cart.items.map((i) => price(i)); }
function price(item) { if (item < 0) throw new RangeError('negative price ' + item); return item; }
run(() => checkout({ items: [1, -2] }));`,
        'async-rejection.cjs': `
async function fetchUser(id) { await null; throw new TypeError('user ' + id + ' missing'); }
async function handler() { const u = await fetchUser(7); return u; }
run(handler);`,
        'aggregate.cjs': `
async function all() { await Promise.any([Promise.reject(new Error('primary down')), Promise.reject(new Error('replica down'))]); }
run(all);`,
      };
export const uncaughtPrelude = `
function describe(s) { const o = {}; for (const k of ['getFunctionName','getTypeName','getMethodName','getFileName','getScriptNameOrSourceURL','getLineNumber','getColumnNumber','isEval','getEvalOrigin','isNative','isToplevel','isConstructor','isAsync','isPromiseAll','getPromiseIndex']) { try { const v = s[k](); o[k] = v === undefined ? null : v; } catch { o[k] = null; } } o.printed = String(s); return o; }
if (process.env.CORPUS_SITES) Error.prepareStackTrace = (e, sites) => JSON.stringify(sites.map(describe));
function report(e) { console.log('SITES ' + JSON.stringify({ sites: JSON.parse(e.stack), type: e.name, message: e.message, cause: e.cause instanceof Error ? { type: e.cause.name, message: e.cause.message } : undefined, errors: e.errors ? e.errors.map((x) => ({ type: x.name, message: x.message })) : undefined })); }
function run(f) { let r; try { r = f(); } catch (e) { if (!process.env.CORPUS_SITES) throw e; report(e); return; } if (r && r.then) r.catch((e) => { if (!process.env.CORPUS_SITES) throw e; report(e); }); }
`;
