'use strict';
// The calls of a codegen item's hidden tests in the untrusted sandbox
// (factory/languages/javascript/untrusted.py, docs/languages.md section 6.6): node runs this file
// inside the kernel isolation of factory/sandbox/untrusted/exec_child.py. It reads one job from
// stdin, {source, entry, calls} (`calls`: the canonical argument text of each call, written by the
// parent from values it read itself), and writes one JSON line per step on stdout: first the
// program's load ({status: 'ok'}, 'syntax_error' or 'load_error': its top level compiled and ran
// in a fresh context), then the result of each call, the trusted worker's `run` (worker.js: the
// program in a fresh vm context of context.js, the call on the arguments, the returned value's
// canonical text). The expected values never come here: the parent compares.

const fs = require('fs');
const vm = require('vm');
const { run } = require('./worker.js');
const { freshContext } = require('./context.js');

const MAX_OUTPUT_BYTES = 65536;

function line(result) {
  fs.writeSync(1, JSON.stringify(result) + '\n');
}

/** Whether the program compiles and its top level runs in a fresh context, as a status. */
function load(source) {
  let program;
  try {
    program = new vm.Script(source, { filename: 'program.js' });
  } catch {
    return 'syntax_error';
  }
  try {
    program.runInContext(freshContext(MAX_OUTPUT_BYTES).context);
  } catch {
    return 'load_error';
  }
  return 'ok';
}

function main() {
  const job = JSON.parse(fs.readFileSync(0, 'utf8'));
  const loaded = load(String(job.source));
  line({ status: loaded });
  if (loaded !== 'ok') return;
  for (const args of job.calls) {
    let result;
    try {
      result = run({ source: job.source, entry: job.entry, args });
    } catch {
      result = { status: 'crash', output_repr: null, output_type: null };
    }
    line(result);
  }
}

main();
