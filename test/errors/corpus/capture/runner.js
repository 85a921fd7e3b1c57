// Runs the scenarios in one engine and emits one JSON line per error: its printed `stack`, and in
// V8 engines also the structured CallSites of a second run of the same scenario (the independent
// truth the fixtures' expectations come from). Loaded after scenarios.js, in the same script.
/* eslint-disable */
(function () {
  var emit = typeof __emit === 'function' ? __emit : typeof print === 'function' ? print : function (s) { console.log(s); };
  function describeSite(s) {
    var out = {};
    var keys = ['getFunctionName', 'getTypeName', 'getMethodName', 'getFileName', 'getScriptNameOrSourceURL', 'getLineNumber', 'getColumnNumber',
      'isEval', 'getEvalOrigin', 'isNative', 'isToplevel', 'isConstructor', 'isAsync', 'isPromiseAll', 'getPromiseIndex'];
    for (var i = 0; i < keys.length; i++) {
      try { var v = s[keys[i]] ? s[keys[i]]() : undefined; out[keys[i]] = v === undefined ? null : typeof v === 'object' && v !== null ? String(v) : v; } catch (e) { out[keys[i]] = null; }
    }
    out.printed = String(s);
    return out;
  }
  var results = [];
  var byName = {};
  var passes = typeof __sitesWanted !== 'undefined' && __sitesWanted ? 2 : 1;
  runScenarios(function (name, error, pass) {
    if (pass === 1) {
      // The second pass: the same frames, read through a hook that keeps the CallSites.
      var saved = Error.prepareStackTrace;
      Error.prepareStackTrace = function (e, sites) {
        var described = [];
        for (var i = 0; i < sites.length; i++) described.push(describeSite(sites[i]));
        return JSON.stringify(described);
      };
      try { byName[name].sites = JSON.parse(error.stack); } catch (e) { byName[name].sites = null; }
      Error.prepareStackTrace = saved;
      return;
    }
    var record = { name: name, stack: String(error && error.stack), type: error && error.name, message: error && error.message };
    if (typeof __inspect === 'function') record.inspect = __inspect(error);
    if (error && error.cause instanceof Error) record.cause = { type: error.cause.name, message: error.cause.message };
    if (error && error.errors && error.errors.length) {
      record.errors = [];
      for (var k = 0; k < error.errors.length; k++) record.errors.push({ type: error.errors[k].name, message: error.errors[k].message });
    }
    results.push(record);
    byName[name] = record;
  }, finish, passes);
  function finish() {
    for (var i = 0; i < results.length; i++) emit('CORPUS ' + JSON.stringify(results[i]));
    emit('CORPUS-DONE');
  }
})();

/**
 * Runs every scenario `passes` times in a row, from the same call site, so that each pass's error
 * has the same frames; `report(name, error, pass)` for each error, then `done()`.
 */
function runScenarios(report, done, passes) {
  var i = 0;
  var pass = 0;
  function advance() { pass++; if (pass >= passes) { pass = 0; i++; } }
  function next() {
    while (i < scenarios.length) {
      var s = scenarios[i];
      var result;
      var error;
      var failed = false;
      try { result = s.fn(); } catch (e) { failed = true; error = e; }
      if (failed) { report(s.name, error, pass); advance(); continue; }
      if (result && typeof result.then === 'function') {
        var current = pass;
        result.then(function () { advance(); next(); }, function (e) { report(s.name, e, current); advance(); next(); });
        return;
      }
      advance();
    }
    done();
  }
  next();
}
