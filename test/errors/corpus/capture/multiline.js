// Multi-line messages, run in every engine in place of scenarios.js (`CORPUS_SET=multiline`): the
// shapes real messages take (a function's source text, pretty-printed JSON, an assertion diff, a
// SQL query, a template excerpt, lines that read as frames of every format, lone braces, blank
// lines, `\r\n`), each thrown from a known innermost function. ES5, as scenarios.js.
/* eslint-disable */
var scenarios = [];
function scenario(name, fn) { scenarios.push({ name: name, fn: fn }); }
function tryCode(src) { try { return eval(src); } catch (e) { return undefined; } }

function onRequest(req) {
    if (!req.user) {
      return { status: 401 };
    }
  }
function invalidCallback() { throw new TypeError('handler is not a valid callback: ' + onRequest.toString()); }
function register() { invalidCallback(); }
scenario('function-source', function () { register(); });

function readConfig() { JSON.parse('{\n  "port": 8080,\n  "hosts": [\n    "a",\n  ]\n}'); }
scenario('json-parse-pretty', function () { readConfig(); });

function rejectBody(body) { throw new SyntaxError('invalid body: ' + JSON.stringify(body, null, 2)); }
scenario('json-body', function () { rejectBody({ user: { id: 7, tags: ['a', 'b'] }, items: [] }); });

function runQuery() {
  throw new Error('syntax error at or near "FROM"\n  SELECT id,\n         name,\n    FROM users\n   WHERE id = $1\n');
}
scenario('sql-with-query', function () { runQuery(); });

function compare() {
  var e = new Error('Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n+   total: 3,\n-   total: 4,\n    items: [\n      1,\n      2\n    ]\n  }\n');
  e.name = 'AssertionError';
  throw e;
}
scenario('assertion-diff-shape', function () { compare(); });
scenario('node-assert-diff', function () {
  if (typeof __assert === 'undefined') return 'skip';
  __assert.deepStrictEqual({ total: 3, items: [1, 2] }, { total: 4, items: [1, 2] });
});

function render() {
  throw new Error('Template render error: (orders.njk) [Line 3, Column 12]\n  expected variable end\n    1| <ul>\n    2| {% for o in orders %}\n  > 3|   <li>{{ o. }}</li>\n      |            ^\n    4| {% endfor %}');
}
scenario('template-excerpt', function () { render(); });

function lookup() { throw new Error('lookup failed:\n    at x (y:1:2)\n    at async Promise.all (index 0)\nwhile resolving'); }
scenario('v8-frames-in-message', function () { lookup(); });
function paint() { throw new Error('paint failed\nfn@file:1:2\n@http://cdn.example.com/app.js:3:4\nglobal code@\n[native code]\nend of report'); }
scenario('at-frames-in-message', function () { paint(); });
function probe() { throw new Error('probe failed\n    at x (y:1:2)'); }
scenario('message-ending-in-frame', function () { probe(); });

function brace() { throw new Error('bad state\n{\n}'); }
scenario('lone-braces', function () { brace(); });
function opener() { throw new Error('config rejected {\n  "retries": -1\n}'); }
scenario('message-opens-brace', function () { opener(); });
function looksInspected() { throw new Error("wrapped {\n  code: 'E_FAKE',\n  [cause]: Error: not a cause\n      at nowhere (/x.js:1:1)\n}\n\nNode.js v24.0.0"); }
scenario('message-looks-inspected', function () { looksInspected(); });

function blanks() { throw new RangeError('\nfirst\n\n\nlast\n'); }
scenario('empty-lines', function () { blanks(); });
function crlf() { throw new Error('windows line\r\nsecond line\r\n  third {\r\n}'); }
scenario('crlf', function () { crlf(); });
function caret() { throw new Error('/srv/app/x.js:12\n  call(\n      ^\n\nSyntaxError: inner'); }
scenario('message-looks-uncaught', function () { caret(); });

tryCode('scenario("async-multiline", function () { async function fetchRows() { await null; throw new Error("query timed out:\\n  SELECT *\\n    FROM orders\\n{\\n}"); } async function page() { await fetchRows(); } return page(); });');
tryCode('scenario("class-method-multiline", function () { class Repo { save() { throw new TypeError("cannot save {\\n  id: 1\\n  }"); } } new Repo().save(); });');
