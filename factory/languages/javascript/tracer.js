'use strict';
// The JavaScript tracer's runtime: runs one call of a program instrumented by
// factory/languages/javascript/instrument.py in a fresh `vm` context and returns the trace, in
// the shape of the Python tracer's result (factory/trace/tracer.py: status, output_repr,
// output_type, steps, states, error). The rules are in docs/languages.md section 6.3.
//
// The job kinds of the node worker (worker.js, the tracer facet's KINDS): `traceJob` gives that
// result, `traceRowJob` the trace as the trace stage stores it, `traceDigestJob` only its digest
// (factory/trace/jobs.py's kinds, same payloads and result shapes).

const crypto = require('crypto');
const vm = require('vm');
const { canonical, typeName, NotLiteral } = require('./canonical.js');
const { freshContext } = require('./context.js');
const { isStackOverflow, thrownStatus, thrownText } = require('./thrown.js');

const objectToString = Object.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;
const getPrototypeOf = Object.getPrototypeOf;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const isArray = Array.isArray;
const objectIs = Object.is;
const stringify = JSON.stringify;
const iteratorSymbol = Symbol.iterator;
const ownKeys = Reflect.ownKeys;
const setValues = Set.prototype.values;
const mapEntries = Map.prototype.entries;

// Run in each fresh context (context.js: the builtins only, as the runner's): gives the context's
// stop sentinel and its TypeError.
const SENTINEL = new vm.Script('[Object.freeze(Object.create(null)), TypeError]');
const MAX_OUTPUT_BYTES = 65536; // what a program may print (to a console that discards it), as the runner
const SCRIPTS = new Map(); // instrumented code -> vm.Script (a program's cases share it)
const MAX_SCRIPTS = 256;

function script(code) {
  let compiled = SCRIPTS.get(code);
  if (compiled === undefined) {
    compiled = new vm.Script(code, { filename: '<program>' });
    if (SCRIPTS.size >= MAX_SCRIPTS) SCRIPTS.delete(SCRIPTS.keys().next().value);
    SCRIPTS.set(code, compiled);
  }
  return compiled;
}

// --- values ---------------------------------------------------------------------------------

// The text of a value with no literal: canonical's form where it has one, NaN, Infinity and -0
// as JavaScript prints them, functions and other objects as <...>.
function looseText(value, seen) {
  switch (typeof value) {
    case 'number':
      return objectIs(value, -0) ? '-0' : String(value);
    case 'string':
      return stringify(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return value.toString();
    case 'function':
      return `<function ${typeof value.name === 'string' && value.name ? value.name : '(anonymous)'}>`;
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value === null) return 'null';
  if (seen.has(value)) return '<cycle>';
  seen.add(value);
  try {
    if (isArray(value)) {
      const parts = [];
      for (let i = 0; i < value.length; i++) {
        const d = getOwnPropertyDescriptor(value, String(i));
        parts.push(d === undefined ? '<hole>' : 'value' in d ? looseText(d.value, seen) : '<accessor>');
      }
      return `[${parts.join(', ')}]`;
    }
    const tag = objectToString.call(value).slice(8, -1);
    if (tag === 'Object' && getPrototypeOf(getPrototypeOf(value) || Object.prototype) === null) {
      const parts = [];
      for (const key of Object.keys(value)) {
        const d = getOwnPropertyDescriptor(value, key);
        parts.push(`${stringify(key)}: ${'value' in d ? looseText(d.value, seen) : '<accessor>'}`);
      }
      return `{${parts.join(', ')}}`;
    }
    if (tag === 'Error') {
      const message = getOwnPropertyDescriptor(value, 'message');
      const text = message && typeof message.value === 'string' ? `: ${message.value}` : '';
      return `<${typeName(value)}${text}>`;
    }
    return `<${tag}>`;
  } finally {
    seen.delete(value);
  }
}

// [text, literal] of a value.
function show(value) {
  try {
    return [canonical(value), true];
  } catch (error) {
    if (!(error instanceof NotLiteral)) throw error;
    return [looseText(value, new Set()), false];
  }
}

// --- telling whether a value changed ---------------------------------------------------------
//
// A frame keeps a copy of each variable's data as of its last capture. A value has changed when
// its text or type name would differ (Python's rule): arrays, plain objects, Sets and Maps are
// compared item by item with their copy, far cheaper than printing them at every step; any other
// object by its type name and text. The walk reads array items and object properties directly.

class ArrayCopy {
  constructor(items) {
    this.items = items;
  }
}

class ObjectCopy {
  constructor(keys, values) {
    this.keys = keys;
    this.values = values;
  }
}

class CollectionCopy {
  constructor(tag, items) {
    this.tag = tag; // '[object Set]' or '[object Map]'
    this.items = items; // a Set's values; a Map's keys and values, interleaved
  }
}

class TextCopy {
  constructor(value) {
    this.text = `${typeName(value)}\0${show(value)[0]}`;
  }
}

const CYCLE = new (class CycleCopy {})();

// The size of the last copy made: 4 per item plus the lengths of its strings and keys (what
// `max_state_bytes` bounds, and what tells a value short enough to print in full).
let copySize = 0;

function isPlainObject(value, tag) {
  if (tag !== '[object Object]') return false;
  const proto = getPrototypeOf(value);
  return proto === null || getPrototypeOf(proto) === null;
}

function collectionItems(value, tag) {
  if (tag === '[object Set]') return [...setValues.call(value)];
  const items = [];
  for (const [k, v] of mapEntries.call(value)) items.push(k, v);
  return items;
}

function copyOf(value, path) {
  copySize += typeof value === 'string' ? value.length + 4 : 4;
  if (isPrimitive(value)) return value;
  if (path.has(value)) return CYCLE;
  path.add(value);
  try {
    if (isArray(value)) {
      const items = new Array(value.length);
      for (let i = 0; i < value.length; i++) items[i] = copyOf(value[i], path);
      return new ArrayCopy(items);
    }
    const tag = objectToString.call(value);
    if (isPlainObject(value, tag)) {
      const keys = Object.keys(value);
      for (const key of keys) copySize += key.length;
      return new ObjectCopy(
        keys,
        keys.map((key) => copyOf(value[key], path)),
      );
    }
    if ((tag === '[object Set]' || tag === '[object Map]') && isBuiltinCollection(value) && ownKeys(value).length === 0) {
      return new CollectionCopy(
        tag,
        collectionItems(value, tag).map((item) => copyOf(item, path)),
      );
    }
    return new TextCopy(value);
  } finally {
    path.delete(value);
  }
}

const TOO_LONG = new (class TooLong {})();

// The text of a copy (the value's text when it was taken) up to a little past `limit` characters.
function printCopy(copy, limit) {
  let out = '';
  const emit = (piece) => {
    out += piece;
    if (out.length > limit) throw TOO_LONG;
  };
  const walk = (c) => {
    if (isPrimitive(c)) return emit(looseText(c, null));
    if (c === CYCLE) return emit('<cycle>');
    if (c instanceof TextCopy) return emit(c.text.slice(c.text.indexOf('\0') + 1));
    if (c instanceof ArrayCopy) {
      emit('[');
      c.items.forEach((item, i) => {
        if (i) emit(', ');
        walk(item);
      });
      return emit(']');
    }
    if (c instanceof ObjectCopy) {
      emit('{');
      c.keys.forEach((key, i) => {
        emit(`${i ? ', ' : ''}${stringify(key)}: `);
        walk(c.values[i]);
      });
      return emit('}');
    }
    const map = c.tag === '[object Map]';
    emit(map ? 'new Map(' : 'new Set(');
    if (c.items.length) {
      emit('[');
      for (let i = 0; i < c.items.length; i += map ? 2 : 1) {
        if (i) emit(', ');
        if (map) emit('[');
        walk(c.items[i]);
        if (map) {
          emit(', ');
          walk(c.items[i + 1]);
          emit(']');
        }
      }
      emit(']');
    }
    return emit(')');
  };
  try {
    walk(copy);
  } catch (error) {
    if (error !== TOO_LONG) throw error;
  }
  return out;
}

function sameAs(copy, value) {
  if (isPrimitive(copy)) return objectIs(copy, value);
  if (isPrimitive(value)) return false;
  if (copy === CYCLE) return true;
  if (copy instanceof ArrayCopy) {
    const items = copy.items;
    if (!isArray(value) || value.length !== items.length) return false;
    for (let i = 0; i < items.length; i++) if (!sameAs(items[i], value[i])) return false;
    return true;
  }
  if (copy instanceof TextCopy) return copy.text === new TextCopy(value).text;
  if (isArray(value)) return false;
  const tag = objectToString.call(value);
  if (copy instanceof ObjectCopy) {
    if (!isPlainObject(value, tag)) return false;
    const keys = Object.keys(value);
    if (keys.length !== copy.keys.length) return false;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== copy.keys[i] || !sameAs(copy.values[i], value[keys[i]])) return false;
    }
    return true;
  }
  if (tag !== copy.tag || !isBuiltinCollection(value) || ownKeys(value).length !== 0) return false;
  const items = collectionItems(value, tag);
  if (items.length !== copy.items.length) return false;
  for (let i = 0; i < items.length; i++) if (!sameAs(copy.items[i], items[i])) return false;
  return true;
}

// A Set or Map of a realm's own class (not a subclass): canonical.js's test.
function isBuiltinCollection(value) {
  const proto = getPrototypeOf(value);
  return proto !== null && getPrototypeOf(proto) !== null && getPrototypeOf(getPrototypeOf(proto)) === null;
}

function isPrimitive(value) {
  return value === null || (typeof value !== 'object' && typeof value !== 'function');
}

// --- one traced call ------------------------------------------------------------------------

class Run {
  constructor(payload) {
    this.sites = payload.sites;
    this.siteSets = payload.sites.map((names) => new Set(names));
    this.capture = payload.capture !== false;
    this.maxSteps = payload.max_steps;
    this.maxRepr = payload.max_repr;
    this.maxStateBytes = payload.max_state_bytes;
    this.sentinel = null; // the stop signal thrown into the program (an object of its context)
    this.TypeError = TypeError; // the context's
    this.active = false;
    this.lines = [];
    this.funcs = [];
    this.states = []; // [step, var, repr, type, literal, truncated]
    this.limitHit = false;
    this.stateHit = false;
    this.overflowed = false;
    this.failure = null;
  }

  stop() {
    throw this.sentinel;
  }

  // The hooks the instrumented program takes (instrument.py's HOOKS, in order).
  hooks() {
    const run = this;
    const capture = this.capture;
    const enter = (name, site, values) => {
      if (!run.active) return null;
      const frame = { func: name, open: 0, names: null, snap: new Map() };
      if (capture) run.record(frame, site, values);
      return frame;
    };
    const step = (frame, line) => {
      if (frame !== null) run.step(frame, line);
    };
    const changed = (frame, site, values) => {
      if (frame !== null && capture) run.record(frame, site, values);
    };
    const result = (frame, site, value, values) => {
      if (frame !== null && capture) run.record(frame, site, values);
      return value;
    };
    const pending = (frame, error, site, values) => {
      if (frame === null) return;
      if (error === run.sentinel) throw error;
      if (capture) run.record(frame, site, values);
    };
    const iterate = (frame, line, iterable) => (frame === null ? iterable : run.stepping(frame, line, iterable));
    const keys = (frame, line, object) => run.stepping(frame, line, forInKeys(object), false);
    return [enter, step, changed, result, pending, iterate, keys];
  }

  // An iterable over `iterable` that takes a step at `line` before each next() but the first
  // (the loop header's first step is taken before the iterable is evaluated).
  stepping(frame, line, iterable, check = true) {
    if (check && (iterable === null || iterable === undefined || typeof iterable[iteratorSymbol] !== 'function')) {
      throw new this.TypeError(`${typeName(iterable)} is not iterable`);
    }
    const run = this;
    return {
      [iteratorSymbol]() {
        const inner = iterable[iteratorSymbol]();
        let first = frame !== null;
        return {
          next() {
            if (first) first = false;
            else if (frame !== null) run.step(frame, line);
            return inner.next();
          },
          return(value) {
            return typeof inner.return === 'function' ? inner.return(value) : { done: true, value };
          },
        };
      },
    };
  }

  // A step at `line` in `frame` (the stop sentinel past the step budget).
  step(frame, line) {
    if (this.lines.length >= this.maxSteps) {
      this.limitHit = true;
      this.stop();
    }
    this.lines.push(line);
    this.funcs.push(frame.func);
    frame.open = this.lines.length;
  }

  // Record, for the frame's open step, the variables of `site` that are new or changed in
  // value since the frame's last capture; forget those the site does not see.
  record(frame, site, values) {
    const names = this.sites[site];
    const step = frame.open;
    frame.open = 0;
    const snap = frame.snap;
    try {
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        const value = values[i];
        if (snap.has(name) && sameAs(snap.get(name), value)) continue;
        copySize = 0;
        const copy = copyOf(value, new Set());
        if (copySize > this.maxStateBytes) this.stateLimit();
        snap.set(name, copy);
        if (step) this.state(step, name, value, copy);
      }
    } catch (error) {
      if (error === this.sentinel) throw error;
      if (isStackOverflow(error)) {
        // The program's recursion, overflowing in the hook: the program's error (as Python's
        // RecursionError in a trace function), and the trace's status even if it is caught.
        this.overflowed = true;
        throw error;
      }
      this.failure = `${error && error.stack ? String(error.stack).split('\n')[0] : String(error)}`;
      this.stop();
    }
    if (frame.names !== names) {
      if (frame.names !== null) {
        const seen = this.siteSets[site];
        for (const name of frame.snap.keys()) if (!seen.has(name)) frame.snap.delete(name);
      }
      frame.names = names;
    }
  }

  stateLimit() {
    this.stateHit = true;
    this.stop();
  }

  // A state of `value` (whose copy is `copy`): a large value is printed from its copy only up to
  // `max_repr`, instead of in full.
  state(step, name, value, copy) {
    let text;
    let literal = false;
    if (copySize > this.maxRepr) text = printCopy(copy, this.maxRepr);
    if (text === undefined || text.length <= this.maxRepr) [text, literal] = show(value);
    const truncated = text.length > this.maxRepr;
    const repr = truncated ? text.slice(0, this.maxRepr) : text;
    this.states.push([step, name, repr, typeName(value), literal && !truncated, truncated]);
  }

  result(status, output, error) {
    let outputRepr = null;
    let outputType = null;
    if (status === 'ok') {
      const [text, literal] = show(output);
      outputRepr = text;
      outputType = typeName(output);
      if (!literal) status = 'non_literal';
    }
    const funcs = this.funcs;
    return {
      status,
      output_repr: outputRepr,
      output_type: outputType,
      steps: this.lines.map((line, i) => ({ step: i + 1, line, func: funcs[i] })),
      states: this.states.map(([step, name, repr, type, literal, truncated]) => ({
        step,
        var: name,
        repr,
        type,
        literal,
        truncated,
      })),
      error,
    };
  }
}

// The keys `for (k in object)` visits: enumerable string keys along the prototype chain, read
// when the loop starts; a key deleted before its turn is skipped, as for…in does.
function* forInKeys(object) {
  if (object === null || object === undefined) return;
  const target = Object(object);
  const keys = [];
  for (const key in target) keys.push(key);
  for (const key of keys) if (key in target) yield key;
}

function bare(status, error) {
  return { status, output_repr: null, output_type: null, steps: [], states: [], error };
}

function firstLine(text) {
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

// Loads an instrumented program in `context` with `run`'s hooks and calls its entry: `payload`
// holds `code` (instrument.py's), `entry` (a top-level name) and `args` (the argument list's text:
// each value must have a literal). Returns {status, output, error}: `bad_program` or `bad_args`
// when nothing ran (`ran` false), else `ok` or the status of what the call threw (not the stop
// sentinel: the run's own flags say why it stopped). The quality jobs (quality.js) share it.
function callInstrumented(payload, run, context) {
  [run.sentinel, run.TypeError] = SENTINEL.runInContext(context);
  let table;
  try {
    table = script(payload.code).runInContext(context)(...run.hooks());
  } catch (error) {
    return { ran: false, status: 'bad_program', output: undefined, error: firstLine(thrownText(error)) };
  }
  if (!hasOwn.call(table, payload.entry) || typeof table[payload.entry] !== 'function') {
    return { ran: false, status: 'bad_program', output: undefined, error: `no function ${stringify(payload.entry)} in the program` };
  }
  let args;
  try {
    args = vm.runInContext(`[${payload.args}\n]`, context);
  } catch (error) {
    return { ran: false, status: 'bad_args', output: undefined, error: `the args do not evaluate: ${firstLine(thrownText(error))}` };
  }
  try {
    for (let i = 0; i < args.length; i++) canonical(args[i]); // each a value with a literal, as the runner's
  } catch (error) {
    const why = error instanceof NotLiteral ? error.message : 'no literal';
    return { ran: false, status: 'bad_args', output: undefined, error: `the args are not literals: ${why}` };
  }
  let output;
  let status = 'ok';
  let error = null;
  run.active = true;
  try {
    output = table[payload.entry](...args);
  } catch (thrown) {
    if (thrown !== run.sentinel) {
      status = thrownStatus(thrown);
      error = firstLine(thrownText(thrown));
    }
  } finally {
    run.active = false;
  }
  return { ran: true, status, output, error };
}

// One traced call, as factory/trace/tracer.py's trace_call gives it. The payload is what the
// tracer facet (tracer.py) made of the stage's: {code, sites} from instrument.py, `entry`, `args`,
// the limits `max_steps`, `max_repr`, `max_state_bytes`, and `capture` (false: steps only); or
// {refused: {status, error}} for a call the parent found it cannot trace (bad_program, bad_args).
function traceJob(payload) {
  if (payload.refused) return bare(payload.refused.status, payload.refused.error);
  const { context } = freshContext(MAX_OUTPUT_BYTES);
  const run = new Run(payload);
  const { ran, status, output, error } = callInstrumented(payload, run, context);
  if (!ran) return bare(status, error);
  if (run.failure !== null) return run.result('tracer_error', undefined, run.failure);
  // Even when the program swallowed the sentinel (a `finally` that returns).
  if (run.limitHit) return run.result('too_many_steps', undefined, null);
  if (run.stateHit) return run.result('state_too_large', undefined, null);
  if (run.overflowed && status === 'ok') {
    return run.result('recursion', undefined, 'the stack overflowed in the tracer during the run');
  }
  return run.result(status, output, error);
}


// A trace's digest: equal for two runs exactly when their steps and states are (the trace stage
// compares the runs of its two hash seeds by it). JavaScript's texts do not depend on the hash
// seed (Sets, Maps and objects keep their order), so the texts are hashed as they are. The parts
// are those of factory/trace/stored.py's `trace_digest`; the hash is SHA-256 (cut to 128 bits),
// not its BLAKE2b-128, which node's OpenSSL does not offer: a digest is only ever compared with
// another of the same tracer.
function digestOf(trace) {
  const parts = trace.steps.map((s) => `${s.line}\0${s.func}`);
  parts.push('\x01');
  for (const s of trace.states) parts.push(`${s.step}\0${s.var}\0${s.type}\0${s.repr}`);
  return crypto.createHash('sha256').update(parts.join('\n'), 'utf8').digest('hex').slice(0, 32);
}

// The text of `value` as Python's json.dumps(value, separators=(',', ':')) writes it: JSON.stringify
// (which escapes lone surrogates) with every other non-ASCII character escaped as ensure_ascii does.
function asciiJson(value) {
  return stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// A result without its steps and states, with `digest` (null unless ok): factory/trace/jobs.py's.
function summary(trace, digest) {
  const { status, output_repr, output_type, error } = trace;
  return { status, output_repr, output_type, error, digest };
}

// Job kind `trace_digest`: the trace's digest only (the second hash seed's run).
function traceDigestJob(payload) {
  const trace = traceJob(payload);
  return summary(trace, trace.status === 'ok' ? digestOf(trace) : null);
}

// Job kind `trace_row`: the trace as the trace stage stores it (`trace`: the compact JSON of
// status, output, steps and states, byte for byte factory/trace/stored.py's `stored_json`), its
// `digest`, `trace_length` and `n_states`.
function traceRowJob(payload) {
  const trace = traceJob(payload);
  if (trace.status !== 'ok') return summary(trace, null);
  const out = summary(trace, digestOf(trace));
  const { status, output_repr, output_type, steps, states } = trace;
  out.trace = asciiJson({ status, output_repr, output_type, steps, states });
  out.trace_length = steps.length;
  out.n_states = states.length;
  return out;
}

module.exports = { Run, callInstrumented, traceJob, traceRowJob, traceDigestJob };
