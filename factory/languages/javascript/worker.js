'use strict';
// The Node.js worker of the trusted sandbox's pool (factory/sandbox/trusted/pool.py, docs/languages.md
// section 6): a long-lived `node` that runs generated JavaScript programs, each in a fresh `vm`
// context holding the language's builtins only.
//
// Protocol: frames (a u32 little-endian length, then UTF-8 JSON). The parent sends [kind, payload];
// the worker answers one result object per job, in order; its first frame is {"ready": pid}. Before
// each job it writes, at offset 0 of the shared-memory file `progress_fd`, the count of jobs started
// (u64) and the process's CPU seconds at that moment (f64): the parent blames a death on the job
// that was running, and times a job by the CPU it used (the worker cannot interrupt a program's
// synchronous loop; the parent reads the CPU time from /proc and kills the worker past the limit).
// Answers of several short jobs may be held back and sent in one write, as the Python worker does.
//
// The program runs in a fresh context of context.js: the language's builtins only, and a `console`
// that discards what it is given, counting the characters against `max_output_bytes`. A
// `run_batch` job runs a few cases of one program in one such context (the Executor's pairs:
// factory/execute/batch.py), each checked as `run` checks a case.

const fs = require('fs');
const path = require('path');
const vm = require('vm');
const { canonical, typeName, NotLiteral, TooLong } = require('./canonical.js');
const { freshContext } = require('./context.js');
const { thrownStatus, thrownText } = require('./thrown.js');

const config = require.main === module ? JSON.parse(process.argv[2] || '{}') : {};
const MAX_OUTPUT_REPR = config.max_output_repr ?? 2000;
const MAX_OUTPUT_BYTES = config.max_output_bytes ?? 65536;
const KINDS = config.kinds ?? { run: 'worker.js:run' };
const HOLD_MS = 2; // how long finished answers may wait to be sent together
const CACHE_SIZE = 256;
const MAX_DETAIL = 300;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

const OK = 'ok';
const BAD_PROGRAM = 'bad_program';
const NON_LITERAL = 'non_literal';
const OUTPUT_TOO_LONG = 'output_too_long';
const CRASH = 'crash';

const apply = Reflect.apply;

/** A small least-recently-used cache of compiled scripts (a vm.Script runs in any context). */
class Scripts {
  constructor(wrap, filename) {
    this.wrap = wrap;
    this.filename = filename;
    this.scripts = new Map();
  }

  get(text) {
    let script = this.scripts.get(text);
    if (script !== undefined) {
      this.scripts.delete(text);
    } else {
      script = new vm.Script(this.wrap(text), { filename: this.filename });
      if (this.scripts.size >= CACHE_SIZE) this.scripts.delete(this.scripts.keys().next().value);
    }
    this.scripts.set(text, script);
    return script;
  }
}

const programs = new Scripts((source) => source, 'program.js');
const argLists = new Scripts((args) => `[${args}\n]`, 'args.js');
const entries = new Scripts((name) => name, 'entry.js');

function drop(status, detail) {
  const result = { status, output_repr: null, output_type: null };
  if (detail) result.detail = String(detail).slice(0, MAX_DETAIL);
  return result;
}

/** A property of a value from the program, or `fallback` when reading it fails or is not a string. */
function stringProperty(value, key, fallback) {
  try {
    const found = value[key];
    return typeof found === 'string' ? found : fallback;
  } catch {
    return fallback;
  }
}

/** The result for a value the program threw: `error:<Type>` or `recursion`, with `Type: message`
 * as the detail (thrown.js, the tracer's naming too). */
function thrown(error) {
  return drop(thrownStatus(error), thrownText(error));
}

/** `ok` with the value's canonical text and type name, or why it has none. */
function describe(value) {
  let text;
  try {
    text = canonical(value, MAX_OUTPUT_REPR);
  } catch (error) {
    if (error instanceof TooLong) return drop(OUTPUT_TOO_LONG);
    return drop(NON_LITERAL, error instanceof NotLiteral ? error.message : stringProperty(error, 'message', ''));
  }
  return { status: OK, output_repr: text, output_type: typeName(value) };
}

/** The `run` job: load the program in a fresh context, evaluate the argument list there (each
 * argument must be a value with a literal), call `entry` on it and describe what it returned. */
function run(payload) {
  return runCases(payload, [payload.args ?? ''])[0];
}

/** The `run_batch` job: the cases of one program (`args_list`, argument-list texts) one after the
 * other in one fresh context; answers `{status: 'ok', results}`, each result what `run` gives for
 * that case when it is the first (the Executor's pairing, docs/languages.md section 6.2). */
function runBatch(payload) {
  return batch(payload, false);
}

/** `run_batch` running the cases in the reverse order (the results still in the given order). */
function runBatchReversed(payload) {
  return batch(payload, true);
}

function batch(payload, reversed) {
  const argsList = payload.args_list;
  if (!Array.isArray(argsList)) return drop(BAD_PROGRAM, 'args_list must be a list');
  const order = argsList.map((_, i) => i);
  if (reversed) order.reverse();
  const ran = runCases(payload, order.map((i) => argsList[i]));
  const results = new Array(ran.length);
  order.forEach((i, k) => {
    results[i] = ran[k];
  });
  return { status: OK, results };
}

/** The results of the program's cases, run in the given order in one fresh context (made only
 * when a case gets that far); every check `run` makes, with the same precedence. */
function runCases(payload, argsList) {
  const source = payload.source;
  const entry = payload.entry ?? 'f';
  // What stops every case (a case whose args are not a string says so first, as `run` does).
  const every = (result) => argsList.map((args) => (typeof args === 'string' ? result : drop(BAD_PROGRAM, STRINGS)));
  if (typeof source !== 'string' || typeof entry !== 'string') return every(drop(BAD_PROGRAM, STRINGS));
  if (!IDENTIFIER.test(entry)) return every(drop(BAD_PROGRAM, `the entry ${JSON.stringify(entry)} is not a name`));
  let program;
  try {
    program = programs.get(source);
  } catch (error) {
    return every(drop(BAD_PROGRAM, `syntax error: ${stringProperty(error, 'message', '')}`));
  }
  let loaded = null;
  return argsList.map((args) => {
    const argList = compiledArgs(args);
    if (!(argList instanceof vm.Script)) return argList;
    loaded ??= load(program, entry);
    return loaded.failed ?? call(loaded, argList);
  });
}

const STRINGS = 'source, entry and args must be strings';

/** The compiled argument list, or the result of a case whose arguments do not compile. */
function compiledArgs(args) {
  if (typeof args !== 'string') return drop(BAD_PROGRAM, STRINGS);
  try {
    return argLists.get(args);
  } catch (error) {
    return drop(BAD_PROGRAM, `the args are not valid JavaScript: ${stringProperty(error, 'message', '')}`);
  }
}

/** A fresh context with the program run in it and its entry function, or `{failed}`: the result
 * of every case when the program's top-level code throws or defines no such function. */
function load(program, entry) {
  const { context, printedTooMuch, printed } = freshContext(MAX_OUTPUT_BYTES);
  try {
    program.runInContext(context);
  } catch (error) {
    return { failed: thrown(error) }; // the program's top-level code failed
  }
  let func;
  try {
    func = entries.get(entry).runInContext(context);
  } catch {
    return { failed: drop(BAD_PROGRAM, `the entry function ${entry} is not defined by the program`) };
  }
  if (typeof func !== 'function') return { failed: drop(BAD_PROGRAM, `the entry ${entry} is not a function`) };
  return { context, func, printedTooMuch, printed, atStart: printed() };
}

/** One case in a loaded context: its printed output counted from where the top-level code left
 * it, as when it runs alone. */
function call(loaded, argList) {
  loaded.printed(loaded.atStart);
  let values;
  try {
    values = argList.runInContext(loaded.context);
    for (let i = 0; i < values.length; i++) canonical(values[i]);
  } catch (error) {
    return drop(BAD_PROGRAM, `the args are not literals: ${stringProperty(error, 'message', '')}`);
  }
  let value;
  try {
    value = apply(loaded.func, undefined, values);
  } catch (error) {
    return loaded.printedTooMuch() ? drop(OUTPUT_TOO_LONG) : thrown(error);
  }
  if (loaded.printedTooMuch()) return drop(OUTPUT_TOO_LONG); // the program caught the error and went on
  return describe(value);
}

// --- the process ---------------------------------------------------------------------------------

const functions = new Map();

/** The function of a job kind: "file.js:name" (the file relative to this one, or absolute). */
function jobFunction(kind) {
  let func = functions.get(kind);
  if (func === undefined) {
    const target = KINDS[kind];
    if (typeof target !== 'string') throw new Error(`unknown job kind ${JSON.stringify(kind)}`);
    const at = target.lastIndexOf(':');
    const file = path.resolve(__dirname, target.slice(0, at));
    func = file === __filename ? module.exports[target.slice(at + 1)] : require(file)[target.slice(at + 1)];
    if (typeof func !== 'function') throw new Error(`job kind ${kind}: ${target} is not a function`);
    functions.set(kind, func);
  }
  return func;
}

function runJob(kind, payload) {
  try {
    return jobFunction(kind)(payload);
  } catch (error) {
    return drop(CRASH, `job ${JSON.stringify(kind)} failed: ${stringProperty(error, 'message', String(error))}`);
  }
}

function encode(result) {
  let body;
  try {
    body = Buffer.from(JSON.stringify(result), 'utf8');
  } catch (error) {
    body = Buffer.from(JSON.stringify(drop(CRASH, `the result is not plain data: ${error.message}`)), 'utf8');
  }
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.length, 0);
  return [head, body];
}

function writeAll(fd, data) {
  let done = 0;
  while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done);
}

/** Whether `buf` holds a whole frame from `pos` on. */
function frameReady(buf, pos) {
  return buf.length - pos >= 4 && buf.length - pos - 4 >= buf.readUInt32LE(pos);
}

function serve() {
  const progressFd = config.progress_fd;
  const progress = Buffer.alloc(16);
  writeAll(1, Buffer.concat(encode({ ready: process.pid })));
  const chunk = Buffer.allocUnsafe(1 << 20);
  let buf = Buffer.alloc(0);
  let out = [];
  let heldSince = 0;
  let started = 0;
  for (;;) {
    const n = fs.readSync(0, chunk, 0, chunk.length, null);
    if (n === 0) return;
    buf = Buffer.concat([buf, chunk.subarray(0, n)]);
    let pos = 0;
    while (frameReady(buf, pos)) {
      const size = buf.readUInt32LE(pos);
      const [kind, payload] = JSON.parse(buf.toString('utf8', pos + 4, pos + 4 + size));
      pos += 4 + size;
      started += 1;
      if (progressFd !== undefined) {
        const cpu = process.cpuUsage();
        progress.writeBigUInt64LE(BigInt(started), 0);
        progress.writeDoubleLE((cpu.user + cpu.system) / 1e6, 8);
        fs.writeSync(progressFd, progress, 0, 16, 0);
      }
      const result = runJob(kind, payload);
      if (!out.length) heldSince = performance.now();
      out.push(...encode(result));
      // As the Python worker: answers wait while the next job is already here, up to HOLD_MS.
      if (progressFd === undefined || !frameReady(buf, pos) || performance.now() - heldSince >= HOLD_MS) {
        writeAll(1, Buffer.concat(out));
        out = [];
      }
    }
    buf = buf.subarray(pos);
  }
}

// describe, drop and the limits are the quality jobs' too (quality.js): their outcomes are the run's.
module.exports = { run, runBatch, runBatchReversed, describe, drop, MAX_OUTPUT_BYTES };

if (require.main === module) serve();
