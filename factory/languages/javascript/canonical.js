'use strict';
// The canonical literal text of a JavaScript value: what factory/languages/javascript/values.py's
// `literal` prints for the value's Python form (docs/languages.md section 5). A value with no
// literal (NaN, Infinity, -0, a function, a symbol, a BigInt, a hole, a cycle, an accessor, an
// instance of another class) throws NotLiteral, with what it is. Given a `limit`, a text that would
// be longer throws TooLong as soon as that is known (before a huge value is printed whole).
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
class TooLong extends Error {}

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

// Counts the characters written so far against the limit.
function spend(state, n) {
  state.left -= n;
  if (state.left < 0) throw new TooLong(`the text passes ${state.limit} characters`);
}

function canonical(value, limit = Infinity) {
  return print(value, { seen: new Set(), left: limit, limit });
}

function print(value, state) {
  switch (typeof value) {
    case 'number':
      return primitive(numberText(value), state);
    case 'string':
      spend(state, value.length + 2); // a lower bound of its text's length: checked first
      return primitive(stringify(value), state, value.length + 2);
    case 'boolean':
      return primitive(value ? 'true' : 'false', state);
    case 'undefined':
      return primitive('undefined', state);
    case 'object':
      break;
    default:
      throw new NotLiteral(`a ${typeof value}`);
  }
  if (value === null) return primitive('null', state);
  const seen = state.seen;
  if (seen.has(value)) throw new NotLiteral('a cycle');
  seen.add(value);
  try {
    return container(value, state);
  } finally {
    seen.delete(value);
  }
}

function primitive(text, state, spent = 0) {
  spend(state, text.length - spent);
  return text;
}

// The texts of `items` joined by ", " (the separators spent as they are written).
function printAll(items, state, each) {
  const parts = [];
  for (const item of items) {
    if (parts.length) spend(state, 2);
    parts.push(each(item));
  }
  return parts.join(', ');
}

function container(value, state) {
  const tag = objectToString.call(value);
  if (isArray(value)) {
    if (!isBuiltinInstance(value)) throw new NotLiteral('an array of another class');
    spend(state, 2);
    const parts = [];
    for (let i = 0; i < value.length; i++) {
      const key = String(i);
      if (getOwnPropertyDescriptor(value, key) === undefined) throw new NotLiteral('an array with a hole');
      if (i) spend(state, 2);
      parts.push(print(dataValue(value, key), state));
    }
    if (ownKeys(value).length !== value.length + 1) throw new NotLiteral('an array with other properties');
    return `[${parts.join(', ')}]`;
  }
  const keys = ownKeys(value);
  if (tag === '[object Set]' && isBuiltinInstance(value) && keys.length === 0) {
    const items = printAll(setValues.call(value), state, (item) => print(item, state));
    return items ? primitive(`new Set([${items}])`, state, items.length) : primitive('new Set()', state);
  }
  if (tag === '[object Map]' && isBuiltinInstance(value) && keys.length === 0) {
    const entry = ([k, v]) => {
      spend(state, 4); // [, ", " and ]
      return `[${print(k, state)}, ${print(v, state)}]`;
    };
    const entries = printAll(mapEntries.call(value), state, entry);
    return entries ? primitive(`new Map([${entries}])`, state, entries.length) : primitive('new Map()', state);
  }
  if (tag === '[object Object]' && isPlainPrototype(getPrototypeOf(value))) {
    spend(state, 2);
    const pair = (key) => {
      if (typeof key !== 'string') throw new NotLiteral('a symbol key');
      if (!getOwnPropertyDescriptor(value, key).enumerable) throw new NotLiteral('a hidden property');
      spend(state, 2);
      return `${print(key, state)}: ${print(dataValue(value, key), state)}`;
    };
    return `{${printAll(keys, state, pair)}}`;
  }
  throw new NotLiteral(`an object (${tag})`);
}

// The type name of a value (values.py's `type_name` for the values `canonical` prints): its
// `typeof` for a primitive, `array`, `object` for a plain object or an instance of a class of the
// program, `Set`, `Map`, an Error's constructor name (`TypeError`), else the internal tag
// (`RegExp`). Read without running the program's code. The one naming of types: the runner's
// output types, the tracer's state types, and the `error:<Type>` of a thrown value (thrown.js).
function typeName(value) {
  const kind = typeof value;
  if (kind !== 'object') return kind;
  if (value === null) return 'null';
  if (isArray(value)) return 'array';
  const tag = objectToString.call(value).slice(8, -1);
  if (tag === 'Error') return constructorName(value) || tag;
  return tag === 'Object' ? 'object' : tag;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]{0,63}$/;

// The name of an object's constructor, read from its prototype's own `constructor` data property
// (no getter of the program runs); '' when there is none or it is not a short identifier.
function constructorName(value) {
  const proto = getPrototypeOf(value);
  const ctor = proto === null ? undefined : getOwnPropertyDescriptor(proto, 'constructor');
  if (!ctor || typeof ctor.value !== 'function') return '';
  const name = getOwnPropertyDescriptor(ctor.value, 'name');
  return name && typeof name.value === 'string' && IDENTIFIER.test(name.value) ? name.value : '';
}

module.exports = { canonical, typeName, NotLiteral, TooLong };
