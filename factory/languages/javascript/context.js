'use strict';
// The fresh `vm` context every generated program runs in, for the runner (worker.js) and the
// tracer (tracer.js) alike: the language's builtins only (docs/languages.md section 6.2).
//
// The context's global is a null-prototype object (a plain `{}` would hand the program this
// realm's `Object`, whose `constructor` is a `Function` that compiles strings here: the way out
// to `process`), and `eval` and `Function` refuse to compile strings. The program sees no
// `require`, `process`, timers, `Date`, `Intl` (it reads the clock), `Math.random`,
// `WeakRef`/`FinalizationRegistry` (garbage collection timing), `SharedArrayBuffer`, `Atomics`,
// `WebAssembly`, nor `ArrayBuffer` and the typed arrays (memory outside the V8 heap, which
// --max-old-space-size does not bound). `console` is the context's own and discards what it is
// given, counting the characters against a limit.

const vm = require('vm');

const CONTEXT_OPTIONS = {
  codeGeneration: { strings: false, wasm: false },
  // Microtasks queued by a program stay in its context's own queue: they never run after the call
  // returns (as in a plain `node`, where they run after the output is printed) and go with it.
  microtaskMode: 'afterEvaluate',
};

const REMOVED = [
  'console', 'Date', 'Intl', 'WeakRef', 'FinalizationRegistry', 'SharedArrayBuffer', 'Atomics',
  'WebAssembly', 'ArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray',
  'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array',
  'BigInt64Array', 'BigUint64Array',
];

// Run in every new context before the program: removes what a program may not see and installs
// the discarding console; returns the count of characters printed, which a number given to it
// sets first (the runner's batches rewind it between cases: worker.js).
const SETUP = new vm.Script(`(function (removed, limit) {
  'use strict';
  for (const name of removed) delete globalThis[name];
  delete Math.random;
  const text = String;
  let written = 0;
  const write = function (...items) {
    for (const item of items) written += text(item).length + 1;
    if (written > limit) throw new RangeError('printed output passed ' + limit + ' characters');
  };
  const console = {};
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace']) console[name] = write;
  Object.defineProperty(globalThis, 'console', { value: console, writable: true, configurable: true });
  return (rewind) => {
    if (rewind !== undefined) written = rewind;
    return written;
  };
})`, { filename: 'setup.js' });

/** A fresh context: its global, the function telling whether the program printed more than
 * `maxOutputBytes` characters, and `printed(rewind)`: the characters printed so far (set to
 * `rewind` first when given). */
function freshContext(maxOutputBytes) {
  return setUp(vm.createContext(Object.create(null), CONTEXT_OPTIONS), maxOutputBytes);
}

/** `context` set up (again) for a program: SETUP run in it, its console's count from 0. */
function setUp(context, maxOutputBytes) {
  const printed = SETUP.runInContext(context)(REMOVED, maxOutputBytes);
  return { context, printedTooMuch: () => printed() > maxOutputBytes, printed };
}

/** The contexts of a series of calls of trusted programs (quality.js: an ablation job's runs of a
 * program and its variants; a worker's `arcs` and `quality` runs), `next()` giving each call's: a context serves the next call too while the
 * calls before left its global object with the names it had (a sloppy-mode assignment to an
 * undeclared name adds one: the next call gets a fresh context), with a new console count. What a
 * program declares lives in its instrumented wrapper's scope (instrument.py), so a call sees
 * nothing of the calls before it; the builtins they share are never changed by generated
 * programs. A fresh context costs about 0.75 ms of CPU, most of a run's. */
class ContextSeries {
  constructor(maxOutputBytes) {
    this.maxOutputBytes = maxOutputBytes;
    this.current = null;
    this.names = 0;
  }

  next() {
    let current = this.current;
    if (current !== null && Reflect.ownKeys(current.global).length === this.names) {
      current = this.current = { ...setUp(current.context, this.maxOutputBytes), global: current.global };
    } else {
      current = this.current = freshContext(this.maxOutputBytes);
      current.global = vm.runInContext('globalThis', current.context);
    }
    this.names = Reflect.ownKeys(current.global).length;
    return current;
  }
}

module.exports = { ContextSeries, freshContext };
