'use strict';
// What a run reports for a value the program threw, one naming for the runner (worker.js) and the
// tracer (tracer.js), as Python's results name a raised exception (factory/sandbox/trusted/worker.py:
// status `error:<Type>`, text `Type: message` of at most 300 characters):
//
// - status `recursion` for V8's stack overflow (a RangeError 'Maximum call stack size exceeded'),
//   else `error:<Type>` with canonical.js's type name of the value: an Error's constructor name
//   (`error:TypeError`, a program's own subclass by its own name), a primitive's type
//   (`throw 3`: `error:number`), `error:object`, `error:array` ... for other values;
// - text `Type: message` for an Error (`Type` alone when the message is empty), `Type: <literal>`
//   for another value with a literal (`string: "x"`), else `Type`; cut at 300 characters. The
//   runner's `detail` is the text, the tracer's `error` its first line (Python's `error_text`).

const { canonical, typeName } = require('./canonical.js');

const MAX_TEXT = 300;
const STACK_OVERFLOW = 'Maximum call stack size exceeded';
const objectToString = Object.prototype.toString;

// A revoked Proxy throws when its tag or its array-ness is read: it is named an `object`.
function isError(value) {
  try {
    return typeof value === 'object' && value !== null && objectToString.call(value) === '[object Error]';
  } catch {
    return false;
  }
}

function typeOf(value) {
  try {
    return typeName(value);
  } catch {
    return 'object';
  }
}

// An Error's message, or '' when reading it fails (a getter of the program's may throw).
function messageOf(error) {
  try {
    const message = error.message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
}

/** Whether a thrown value is V8's stack overflow. */
function isStackOverflow(value) {
  return isError(value) && typeOf(value) === 'RangeError' && messageOf(value) === STACK_OVERFLOW;
}

/** The status of a run that ended with `value` thrown: `recursion` or `error:<Type>`. */
function thrownStatus(value) {
  return isStackOverflow(value) ? 'recursion' : `error:${typeOf(value)}`;
}

/** The text of a thrown value: `Type: message` (module comment), at most 300 characters. */
function thrownText(value) {
  const type = typeOf(value);
  let shown = '';
  if (isError(value)) {
    shown = messageOf(value);
  } else {
    try {
      shown = canonical(value, MAX_TEXT);
    } catch {
      shown = ''; // no literal, or a longer one
    }
  }
  return (shown ? `${type}: ${shown}` : type).slice(0, MAX_TEXT);
}

module.exports = { isStackOverflow, thrownStatus, thrownText };
