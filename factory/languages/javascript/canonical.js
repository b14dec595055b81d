'use strict';
// The canonical literal text of a JavaScript value: what factory/languages/javascript/values.py's
// `literal` prints for the value's Python form (docs/languages.md section 5). A value with no
// literal (NaN, Infinity, -0, a function, a symbol, a BigInt, a hole, a cycle, an accessor, an
// instance of another class) throws NotLiteral, with what it is.
//
// Values may come from another realm (a program runs in its own `vm` context), so types are told
// by their internal tags, not by `instanceof`, and a Set or Map is read with this realm's own
// intrinsics, captured here before any program runs: a program cannot patch them.

const objectToString = Object.prototype.toString;
const getPrototypeOf = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const isArray = Array.isArray;
const setValues = Set.prototype.values;
const mapEntries = Map.prototype.entries;
const stringify = JSON.stringify;
const objectIs = Object.is;

class NotLiteral extends Error {}

// A realm's Object.prototype, Set.prototype ... : a prototype whose own prototype is null or
// that realm's Object.prototype, told apart by tag.
function isPlainPrototype(proto) {
  return proto === null || getPrototypeOf(proto) === null;
}

function isBuiltinInstance(value) {
  const proto = getPrototypeOf(value);
  return proto !== null && isPlainPrototype(getPrototypeOf(proto));
}

function numberText(value) {
  if (value !== value || value === Infinity || value === -Infinity) {
    throw new NotLiteral(`${value} has no literal`);
  }
  if (objectIs(value, -0)) throw new NotLiteral('-0 has no literal');
  return String(value);
}

// The data properties of a plain object or an array, in order; an accessor or a symbol key throws.
function dataValue(object, key) {
  const descriptor = getOwnPropertyDescriptor(object, key);
  if (!('value' in descriptor)) throw new NotLiteral(`an accessor property (${String(key)})`);
  return descriptor.value;
}

function canonical(value, seen = new Set()) {
  switch (typeof value) {
    case 'number':
      return numberText(value);
    case 'string':
      return stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'object':
      break;
    default:
      throw new NotLiteral(`a ${typeof value}`);
  }
  if (value === null) return 'null';
  if (seen.has(value)) throw new NotLiteral('a cycle');
  seen.add(value);
  try {
    return container(value, seen);
  } finally {
    seen.delete(value);
  }
}

function container(value, seen) {
  const tag = objectToString.call(value);
  const keys = ownKeys(value);
  if (isArray(value)) {
    if (!isBuiltinInstance(value)) throw new NotLiteral('an array of another class');
    const parts = [];
    for (let i = 0; i < value.length; i++) {
      if (getOwnPropertyDescriptor(value, String(i)) === undefined) throw new NotLiteral('an array with a hole');
      parts.push(canonical(dataValue(value, String(i)), seen));
    }
    if (keys.length !== value.length + 1) throw new NotLiteral('an array with other properties');
    return `[${parts.join(', ')}]`;
  }
  if (tag === '[object Set]' && isBuiltinInstance(value) && keys.length === 0) {
    const items = [...setValues.call(value)].map((item) => canonical(item, seen));
    return items.length ? `new Set([${items.join(', ')}])` : 'new Set()';
  }
  if (tag === '[object Map]' && isBuiltinInstance(value) && keys.length === 0) {
    const entries = [...mapEntries.call(value)].map(
      ([k, v]) => `[${canonical(k, seen)}, ${canonical(v, seen)}]`,
    );
    return entries.length ? `new Map([${entries.join(', ')}])` : 'new Map()';
  }
  if (tag === '[object Object]' && isPlainPrototype(getPrototypeOf(value))) {
    const parts = [];
    for (const key of keys) {
      if (typeof key !== 'string') throw new NotLiteral('a symbol key');
      if (!getOwnPropertyDescriptor(value, key).enumerable) throw new NotLiteral('a hidden property');
      parts.push(`${stringify(key)}: ${canonical(dataValue(value, key), seen)}`);
    }
    return `{${parts.join(', ')}}`;
  }
  throw new NotLiteral(`an object (${tag})`);
}

module.exports = { canonical, NotLiteral };
