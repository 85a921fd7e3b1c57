// Scenarios run in every engine (a classic script, ES5 syntax at its core so that old engines such
// as Hermes 0.12 load it; newer syntax is compiled by `tryCode` and skipped where unsupported).
// Each scenario throws (or rejects with) an error from a known innermost function; the runner
// records the error. Nothing here may depend on the engine.
/* eslint-disable */
var scenarios = [];
function scenario(name, fn) { scenarios.push({ name: name, fn: fn }); }
function tryCode(src) { try { return eval(src); } catch (e) { return undefined; } }

function thrower(message) { throw new Error(message); }
function levelA() { thrower('plain'); }
function levelB() { levelA(); }
scenario('plain', function () { levelB(); });

function deep(n) { if (n === 0) throw new TypeError('deep'); deep(n - 1); }
scenario('deep-recursion-8', function () { deep(8); });

var objectWithMethods = {
  method: function () { throw new Error('object method'); },
  named: function namedExpression() { throw new Error('named expression'); },
};
scenario('object-method', function () { objectWithMethods.method(); });
scenario('named-function-expression', function () { objectWithMethods.named(); });
objectWithMethods.alias = objectWithMethods.method;
scenario('method-through-alias', function () { objectWithMethods.alias(); });

function Widget() { throw new Error('constructor'); }
scenario('constructor', function () { new Widget(); });
function Model() {}
Model.prototype.save = function () { throw new RangeError('prototype method'); };
scenario('prototype-method', function () { new Model().save(); });

scenario('anonymous-callback', function () { (function () { throw new Error('anonymous'); })(); });
scenario('array-map', function () { [1, 2].map(function mapper(x) { if (x === 2) throw new Error('map'); return x; }); });
scenario('array-forEach', function () { [1].forEach(function each() { throw new Error('forEach'); }); });
scenario('array-sort', function () { [3, 1, 2].sort(function compare(a, b) { throw new Error('sort'); }); });
scenario('json-reviver', function () { JSON.parse('{"a":1}', function reviver(k, v) { if (k === 'a') throw new SyntaxError('reviver'); return v; }); });
scenario('string-replace', function () { 'abc'.replace(/b/, function replacer() { throw new Error('replace'); }); });
scenario('function-call-apply', function () { thrower.call(null, 'call'); });
scenario('bound-function', function () { thrower.bind(null, 'bound')(); });
scenario('getter-defineProperty', function () {
  var o = {}; Object.defineProperty(o, 'label', { get: function () { throw new Error('getter'); } }); return o.label;
});
scenario('name-with-at-and-space', function () {
  var f = function () { throw new Error('odd name'); }; Object.defineProperty(f, 'name', { value: 'load@v2 user' }); f();
});
scenario('name-with-parens', function () {
  var f = function () { throw new Error('paren name'); }; Object.defineProperty(f, 'name', { value: 'wrap (inner)' }); f();
});
// Anonymous functions inside named ones, which SpiderMonkey names by their place (`outerWork/<`).
function outerWork() { return (function () { throw new Error('closure'); })(); }
scenario('closure-in-function', function () { outerWork(); });
var modules = [function () {
  function Bar() {}
  Bar.prototype._baz = function () { (function () { (function () { throw new Error('closure path'); })(); })(); };
  new Bar()._baz();
}];
scenario('closure-path', function () { modules[0](); });
var holder = {};
holder['@fn'] = function () { throw new Error('at in name'); };
scenario('name-with-at-computed', function () { holder['@fn'](); });
scenario('direct-eval', function () { eval('function evaluated() { throw new Error("eval"); } evaluated();'); });
scenario('indirect-eval', function () { (0, eval)('(function evaluatedGlobal() { throw new Error("indirect eval"); })()'); });
scenario('nested-eval', function () { eval('eval("function twice() { throw new Error(\\"nested eval\\"); } twice();")'); });
scenario('new-function', function () { new Function('a', 'throw new Error("new Function " + a)')('x'); });
scenario('eval-sourceurl-webpack', function () {
  eval('function render() { throw new Error("webpack eval"); }\nrender();\n//# sourceURL=webpack-internal:///./src/app.js');
});
scenario('eval-sourceurl-plain', function () {
  eval('(function named() { throw new Error("sourceURL"); })();\n//# sourceURL=generated/chunk.js');
});
scenario('webpack-eval-bundle', function () {
  var modules = {
    './src/index.js': function (module, exports, require) { eval('require("./src/util.js").run();\n//# sourceURL=webpack-internal:///./src/index.js'); },
    './src/util.js': function (module, exports, require) { eval('exports.run = function run() { throw new Error("bundle"); };\n//# sourceURL=webpack-internal:///./src/util.js'); },
  };
  function req(id) { var m = { exports: {} }; modules[id](m, m.exports, req); return m.exports; }
  req('./src/index.js');
});
scenario('error-subclass-type', function () { var e = new Error('custom'); e.name = 'PaymentDeclinedError'; throw e; });
scenario('message-with-at-sign', function () { throw new Error('no user jane@example.com at row 3:4'); });
scenario('multiline-message', function () { throw new Error('first line\n    at fake (not/a/frame.js:1:2)\nthird line'); });

// Newer syntax: compiled where the engine has it.
tryCode('scenario("class-method", function () { class Cart { total() { throw new Error("class method"); } } new Cart().total(); });');
tryCode('scenario("class-static", function () { class Cart { static create() { throw new Error("static"); } } Cart.create(); });');
tryCode('scenario("class-getter", function () { class Cart { get label() { throw new Error("getter"); } } return new Cart().label; });');
tryCode('scenario("class-setter", function () { class Cart { set label(v) { throw new Error("setter"); } } new Cart().label = 1; });');
tryCode('scenario("class-constructor", function () { class Cart { constructor() { throw new Error("class constructor"); } } new Cart(); });');
tryCode('scenario("private-method", function () { class Cart { #secret() { throw new Error("private"); } run() { this.#secret(); } } new Cart().run(); });');
tryCode('scenario("symbol-method", function () { const o = { [Symbol.iterator]() { throw new Error("symbol"); } }; o[Symbol.iterator](); });');
tryCode('scenario("method-name-with-at", function () { const o = { "@run"() { throw new Error("at method"); } }; o["@run"](); });');
tryCode('scenario("computed-method", function () { const k = "dyn" + 1; const o = { [k]() { throw new Error("computed"); } }; o.dyn1(); });');
tryCode('scenario("arrow", function () { const go = () => { throw new Error("arrow"); }; go(); });');
tryCode('scenario("generator", function () { function* gen() { throw new Error("generator"); } gen().next(); });');
tryCode('scenario("async-await", function () { async function load() { await null; throw new Error("async"); } async function page() { await load(); } return page(); });');
tryCode('scenario("async-anonymous", function () { const go = async () => { await null; throw new Error("async arrow"); }; async function outer() { await go(); } return outer(); });');
tryCode('scenario("promise-all-index", function () { async function one() { await null; throw new Error("all"); } async function main() { await Promise.all([Promise.resolve(1), one()]); } return main(); });');
tryCode('scenario("promise-any", function () { async function fail() { await null; throw new Error("any"); } return Promise.any([fail()]); });');
tryCode('scenario("promise-then", function () { return Promise.resolve(1).then(function onValue() { throw new Error("then"); }); });');
tryCode('scenario("error-cause", function () { function inner() { throw new TypeError("inner"); } try { inner(); } catch (e) { throw new Error("outer", { cause: e }); } });');
tryCode('scenario("aggregate-error", function () { throw new AggregateError([new Error("one"), new RangeError("two")], "many"); });');
tryCode('scenario("stack-overflow", function () { function down(n) { return down(n + 1) + 1; } down(0); });');
scenario('wasm-import-throws', function () {
  if (typeof WebAssembly === 'undefined') return 'skip';
  var bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 2, 7, 1, 1, 109, 1, 102, 0, 0, 3, 3, 2, 0, 0, 7, 9, 2, 1, 103, 0, 1, 1, 116, 0, 2, 10, 10, 2, 4, 0, 16, 0, 11, 3, 0, 0, 11]);
  var instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { m: { f: function fromWasm() { throw new Error('wasm import'); } } });
  instance.exports.g();
});
scenario('wasm-trap', function () {
  if (typeof WebAssembly === 'undefined') return 'skip';
  var bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 2, 7, 1, 1, 109, 1, 102, 0, 0, 3, 3, 2, 0, 0, 7, 9, 2, 1, 103, 0, 1, 1, 116, 0, 2, 10, 10, 2, 4, 0, 16, 0, 11, 3, 0, 0, 11]);
  var instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { m: { f: function () {} } });
  instance.exports.t();
});
