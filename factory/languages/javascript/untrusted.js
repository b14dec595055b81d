'use strict';
// One call of a program in the untrusted sandbox (factory/languages/javascript/untrusted.py,
// docs/languages.md section 6.6): node runs this file inside the kernel isolation of
// factory/sandbox/untrusted/exec_child.py. It reads one job from stdin, {source, entry, args}, runs
// it as the trusted worker's `run` job does (worker.js: the program in a fresh vm context of
// context.js, the argument text evaluated there and required to be literals), and writes the
// result object as JSON on stdout. `args` is the canonical literal text the parent wrote from values
// it read itself, never a model's text.

const fs = require('fs');
const { run } = require('./worker.js');

let result;
try {
  result = run(JSON.parse(fs.readFileSync(0, 'utf8')));
} catch (error) {
  result = { status: 'crash', output_repr: null, output_type: null, detail: String(error).slice(0, 300) };
}
fs.writeSync(1, JSON.stringify(result));
