'use strict';
// The inputs stage's quality jobs for JavaScript (the `quality` facet's KINDS, quality.py): `arcs`
// and `ablation`, with the payloads and result shapes of Python's (factory/quality/jobs.py). Both
// run programs instrumented by instrument.py (the parent instruments them: quality.py) with the
// tracer's runtime (tracer.js: its `Run` with the capture of states off), counting steps, which
// are JavaScript's line events (docs/languages.md section 6.3): a count, so a budget stops a run
// at the same step under any load.

const { callInstrumented, Run } = require('./tracer.js');
const { ContextSeries, freshContext } = require('./context.js');
const { describe, drop, MAX_OUTPUT_BYTES } = require('./worker.js');

const OK = 'ok';
const BAD_PROGRAM = 'bad_program';
const OUTPUT_TOO_LONG = 'output_too_long';
const TOO_MANY_STEPS = 'too_many_steps';
const BUDGET = 'budget'; // an ablation run stopped by its budget (an outcome no original run has)
const INCOMPLETE = 'incomplete';
const LINE_BASE = 1 << 20; // an arc (a, b) is a * LINE_BASE + b (lines are far fewer)

/** A run that counts its steps (stopping past `budget`), and records arcs when `arcs` is a Set:
 * per frame, (previous line, line), the previous line 0 at the frame's first step, only from
 * the lines of `kept` when it is given. */
class CountingRun extends Run {
  constructor(budget, arcs = null, kept = null) {
    super({ sites: [], capture: false, max_steps: Infinity, max_repr: 0, max_state_bytes: 0 });
    this.budget = budget;
    this.events = 0;
    this.arcs = arcs;
    this.kept = kept;
    this.frames = [];
    this.steppedLines = new Set();
  }

  hooks() {
    const [enter, ...rest] = super.hooks();
    if (this.arcs === null) return [enter, ...rest];
    const frames = this.frames;
    const tracked = (name, site, values) => {
      const frame = enter(name, site, values);
      if (frame !== null) {
        frame.last = 0;
        frames.push(frame);
      }
      return frame;
    };
    return [tracked, ...rest];
  }

  // The order of Python's arcs tracer: the step is recorded, then the budget checked.
  step(frame, line) {
    if (this.arcs !== null) {
      if (this.kept === null || this.kept.has(frame.last)) this.arcs.add(frame.last * LINE_BASE + line);
      this.steppedLines.add(line);
      frame.last = line;
    }
    this.events += 1;
    if (this.budget !== null && this.events > this.budget) {
      this.limitHit = true;
      this.stop();
    }
  }

  // The (last line, 0) arc of every frame: where it returned or threw from.
  returns() {
    for (const frame of this.frames) {
      if (this.kept === null || this.kept.has(frame.last)) this.arcs.add(frame.last * LINE_BASE);
    }
  }
}

/** The outcome of one call as the `run` job reports it (worker.js): status, output_repr,
 * output_type (and `detail` for a throw). */
function outcome(payload, run, contexts = null) {
  const { context, printedTooMuch } = contexts === null ? freshContext(MAX_OUTPUT_BYTES) : contexts.next();
  const call = callInstrumented(payload, run, context);
  if (!call.ran) return drop(BAD_PROGRAM, call.error);
  if (run.limitHit) return drop(run.arcs === null ? BUDGET : TOO_MANY_STEPS);
  if (printedTooMuch()) return drop(OUTPUT_TOO_LONG);
  if (call.status !== OK) return drop(call.status, call.error);
  return describe(call.output);
}

// The runs of the arcs jobs (the inputs stage's candidates, a dozen a program) and of the quality
// jobs (40 random runs a program) share contexts as an ablation job's runs do, across jobs.
const SHARED_CONTEXTS = new ContextSeries(MAX_OUTPUT_BYTES);

/** Job kind `arcs`: the `run` job's result plus `lines` (the sorted lines stepped), `arcs`
 * (sorted [line, next line] pairs; next line 0: the frame returned or threw after the line), and
 * `events` (steps). Payload (quality.py's): `code`, `entry`, `args`, `tests` (the arcs' first
 * lines, or null for every arc), `budget` (steps, or null); or `refused` (bad_program). A run
 * past `budget` stops with `too_many_steps`. */
function arcsJob(payload) {
  if (payload.refused) return { ...drop(BAD_PROGRAM, payload.refused), lines: [], arcs: [], events: 0 };
  const arcs = new Set();
  const tests = payload.tests;
  const run = new CountingRun(payload.budget ?? null, arcs, tests == null ? null : new Set(tests));
  const result = outcome(payload, run, SHARED_CONTEXTS);
  run.returns();
  result.lines = [...run.steppedLines].sort((a, b) => a - b);
  result.arcs = [...arcs].sort((a, b) => a - b).map((arc) => [Math.floor(arc / LINE_BASE), arc % LINE_BASE]);
  result.events = run.events;
  return result;
}

class TotalExceeded extends Error {}

/** Job kind `ablation` (factory/quality/jobs.py's `ablation_job`, the same payload but for the
 * programs: `program` and each of `variants` is {code} or {refused}, made by quality.py).
 * Answer: `status` (`ok`, `incomplete` when `total` ran out), `changed` (per variant the indices
 * of the inputs whose outcome it changed, or null when not run) and `events` used. */
function ablationJob(payload) {
  const { entry, inputs } = payload;
  const full = Math.min(payload.full ?? inputs.length, inputs.length);
  const factor = payload.factor ?? 2;
  const slack = payload.slack ?? 1000;
  let used = 0;
  const contexts = new ContextSeries(MAX_OUTPUT_BYTES);

  // [outcome, steps] of one call; `budget` null: only the job's total bounds it.
  const call = (program, args, budget) => {
    if (program.refused) return [`${BAD_PROGRAM}\0`, 0];
    const left = payload.total - used;
    if (left <= 0) throw new TotalExceeded();
    const run = new CountingRun(budget === null ? left : Math.min(budget, left));
    const result = outcome({ code: program.code, entry, args }, run, contexts);
    used += run.events;
    if (run.limitHit && (budget === null || left < budget)) throw new TotalExceeded();
    return [`${result.status}\0${result.output_repr ?? ''}`, run.events];
  };
  const originals = new Array(inputs.length).fill(null);
  const original = (i) => {
    if (originals[i] === null) originals[i] = call(payload.program, inputs[i], null);
    return originals[i];
  };
  const changed = (variant, i) => {
    const [expected, events] = original(i);
    return call(variant, inputs[i], factor * events + slack)[0] !== expected;
  };

  // `first_hit` (Python's ablation_job): a variant's runs on the first `full` inputs stop at the
  // first change while every variant changes one of them; once one does not, the others' are completed.
  const results = new Array(payload.variants.length).fill(null);
  let firstHit = Boolean(payload.first_hit);
  const partial = [];
  let status = OK;
  try {
    let stopped = false;
    for (let v = 0; v < payload.variants.length; v++) {
      const variant = payload.variants[v];
      let hits = [];
      for (let i = 0; i < full; i++) {
        if (changed(variant, i)) {
          hits.push(i);
          if (firstHit) break;
        }
      }
      if (firstHit && hits.length) partial.push(v);
      if (!hits.length) {
        firstHit = false;
        for (let i = full; i < inputs.length; i++) if (changed(variant, i)) hits.push(i);
      }
      results[v] = hits;
      if (!hits.length && v < (payload.stop ?? 0)) {
        stopped = true;
        break;
      }
    }
    if (!stopped && !firstHit) {
      for (const v of partial) {
        const [hit] = results[v];
        results[v] = null; // not run, should the total run out in the runs below
        const hits = [hit];
        for (let i = hit + 1; i < full; i++) if (changed(payload.variants[v], i)) hits.push(i);
        results[v] = hits;
      }
    }
  } catch (error) {
    if (!(error instanceof TotalExceeded)) throw error;
    status = INCOMPLETE;
  }
  return { status, changed: results, events: used };
}

/** Job kind `quality` (factory/quality/probe.py's, for the measurement of docs/quality.md): one
 * program's `if` outcomes on its own `inputs` (per test of `tests`, [line, body line], whether
 * the step after it was the body's first: [line, went true, went false]), its runs on the
 * `random` argument lists (up to the first output that differs from the first one) and on each
 * of `items` ([argument list, expected output text]). A random or item run is bounded by `budget`
 * steps; after `max_slow` runs past it the rest are not run. Outputs are compared by their
 * canonical text. `static` (the parent's facts: node has no tree-sitter) is handed back. */
function qualityJob(payload) {
  if (payload.refused) return drop(BAD_PROGRAM, payload.refused);
  const { code, entry } = payload;
  const body = new Map(payload.tests.map(([line, first]) => [line, first]));
  const seen = new Map();
  if (body.size) {
    for (const args of payload.inputs) {
      const result = arcsJob({ code, entry, args, tests: [...body.keys()], budget: null });
      for (const [line, after] of result.arcs) {
        if (!body.has(line)) continue;
        if (!seen.has(line)) seen.set(line, [line, 0, 0]);
        seen.get(line)[after === body.get(line) ? 1 : 2] = 1;
      }
    }
  }
  let slow = 0;
  const run = (args) => {
    if (slow >= payload.max_slow) return null;
    const counted = new CountingRun(payload.budget);
    const result = outcome({ code, entry, args }, counted, SHARED_CONTEXTS);
    if (counted.limitHit) slow += 1;
    return result.status === OK ? result.output_repr : null;
  };
  const values = [];
  for (const args of payload.random) {
    const value = run(args);
    if (value === null) continue;
    values.push(value);
    if (value !== values[0]) break; // not constant: the remaining draws cannot change that
  }
  const solved = payload.items.map(([args, expected]) => {
    const value = run(args);
    return value !== null && value === expected;
  });
  return {
    status: OK,
    static: payload.static,
    tests: [...seen.keys()].sort((a, b) => a - b).map((line) => seen.get(line)),
    random_ok: values.length,
    random_constant: values.every((v) => v === values[0]),
    solved,
  };
}

module.exports = { arcsJob, ablationJob, qualityJob };
