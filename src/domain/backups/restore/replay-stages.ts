// The restore's stages inside the zlib child (zlib-child.ts), written as the child's source text.
import { blobsFilterSource } from '../format/blobs-filter.ts';
import { roleFilterSource } from './role-filter.ts';
import { sqlStatementsSource } from './sql-statements.ts';

/**
 * On the way into psql: the preamble first; pg_dump's own BEGIN/COMMIT around large objects left
 * out (blobs-filter.ts); statements naming roles the target lacks or the restoring role cannot act
 * as left out and counted (role-filter.ts); and COMMIT written only once the whole script has
 * passed and checks out: the byte count and sha256 pg_dump's compressor recorded, and the closing
 * line. A script that
 * does not is refused: psql reads the end of a script whose transaction is still open, and the
 * server rolls it back.
 */
export const restoreStages = `
const stage = (filter) => new Transform({
  transform(chunk, _enc, done) { for (const b of filter.push(chunk)) this.push(b); done(); },
  flush(done) {
    try { for (const b of filter.end()) this.push(b); } catch (err) { done(err); return; }
    done();
  },
});
${blobsFilterSource}
${sqlStatementsSource}
${roleFilterSource}
const blobs = stage(blobsTransactionFilter());
// The target's roles arrive on fd 5 (argv holds at most 128 KiB, a server may have thousands).
let roleFilter = null;
const roleOptions = !options.roles ? Promise.resolve(null) : new Promise((resolve, reject) => {
  let text = '';
  const pipe = require('node:fs').createReadStream(null, { fd: 5 });
  pipe.on('data', (d) => { text += d; });
  pipe.on('error', reject);
  pipe.on('close', () => { try { resolve(JSON.parse(text)); } catch (err) { reject(err); } });
});
const withRoles = (fn, done) => roleOptions.then((o) => {
  if (o && !roleFilter) roleFilter = roleStatementFilter(o, sqlStatementSplitter);
  fn();
}).catch(done);
const roles = new Transform({
  transform(chunk, _enc, done) {
    withRoles(() => { if (!roleFilter) { done(null, chunk); return; } for (const b of roleFilter.push(chunk)) this.push(b); done(); }, done);
  },
  flush(done) {
    withRoles(() => { if (roleFilter) for (const b of roleFilter.end()) this.push(b); done(); }, done);
  },
});
let refused = null;
const gate = new Transform({
  transform(chunk, _enc, done) { done(null, chunk); },
  flush(done) {
    const got = figures();
    const want = options.expected;
    if (want && got.bytes !== want.bytes) refused = 'the backup holds ' + got.bytes + ' bytes of SQL where pg_dump wrote ' + want.bytes;
    else if (want && got.sha256 !== want.sha256) refused = 'the backup\\'s SQL differs from what pg_dump wrote (sha256)';
    else refused = dumpIncompleteReason(tail.toString('latin1'));
    report({ ...got, refused, skipped: roleFilter ? roleFilter.skipped() : { statements: 0, roles: [] } });
    if (refused) { done(new Error(refused)); return; }
    // COMMIT only on the worker's word (fd 4): a worker that dies now means a rollback.
    let said = '';
    const confirm = require('node:fs').createReadStream(null, { fd: 4 });
    confirm.on('data', (d) => { said += d; });
    confirm.on('error', () => undefined);
    confirm.on('close', () => {
      if (said !== 'commit\\n') { refused = 'the worker did not confirm the commit'; done(new Error(refused)); return; }
      this.push('\\nCOMMIT;\\n');
      done();
    });
  },
});
gate.push(options.preamble || '');`;
