// describe(value): what a caller can observe of a JavaScript value, as JSON (ADR-0104).
//
// Every value becomes an object with its `typeof`; then, by kind:
//   null                    {"typeof": "object", "value": null}
//   boolean, string         {"typeof": ..., "value": v}
//   number                  {"typeof": "number", "value": v} (NaN, Infinity and -0 as strings)
//   bigint                  {"typeof": "bigint", "value": "<decimal>"}
//   function                {"typeof": "function", "name": f.name}
//   object                  {"typeof": "object", "constructor": <constructor.name or null>, ...}
//     Array                 "items": [describe(item), ...]
//     ArrayBuffer, views    "bytes": "<hex>"
//     Date                  "value": <epoch ms>
//     Map / Set             "entries": [[describe(key), describe(value)], ...] / "items"
//     Error                 "name", "message", "cause" when it has one, plus own keys other than "stack"
//     any other object      "keys" (own enumerable string keys, in order) and "properties" (each described);
//                           for a class instance (prototype other than Object.prototype / null) also
//                           "prototype": the names on its prototype chain down to a built-in prototype
//                           (Object, Iterator, Promise, Error), each "method", "getter" or "value" (symbols:
//                           only iteration and disposal), "inherits": that built-in, and "getters": each
//                           getter's value, described.
// A value that differs from run to run (an id, a timestamp, a duration) is named by its path in `varies`
// (a list of dotted paths, "*" matching any key or index); such a value is described by its type only, with
// "varies": true. Paths start at "$".

const MAX_DEPTH = 8;

export function describe(value, varies = [], path = "$", depth = 0) {
  const patterns = varies.map((p) => (p.startsWith("$") ? p : `$.${p}`));
  return describeAt(value, patterns, path, depth);
}

function matches(patterns, path) {
  const parts = path.split(".");
  return patterns.some((pattern) => {
    const want = pattern.split(".");
    return want.length === parts.length && want.every((w, i) => w === "*" || w === parts[i]);
  });
}

function primitive(value) {
  if (typeof value === "number") {
    if (Number.isNaN(value)) return { typeof: "number", value: "NaN" };
    if (!Number.isFinite(value)) return { typeof: "number", value: value > 0 ? "Infinity" : "-Infinity" };
    if (Object.is(value, -0)) return { typeof: "number", value: "-0" };
    return { typeof: "number", value };
  }
  if (typeof value === "bigint") return { typeof: "bigint", value: value.toString() };
  if (typeof value === "symbol") return { typeof: "symbol", value: value.toString() };
  if (typeof value === "function") return { typeof: "function", name: nameOf(value) };
  return { typeof: typeof value, value };
}

function constructorName(value) {
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return null;
  const ctor = proto.constructor;
  return typeof ctor === "function" ? nameOf(ctor) : null;
}

// A function's name; an RPC stub answers any property with another stub, so anything else is null.
function nameOf(fn) {
  return typeof fn.name === "string" ? fn.name : null;
}

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function keyName(key) {
  return typeof key === "symbol" ? key.toString() : key;
}

// The symbols a caller uses (iteration, disposal); workerd's internal markers and toStringTag are left out.
const CALLER_SYMBOLS = new Set(
  [Symbol.iterator, Symbol.asyncIterator, Symbol.dispose, Symbol.asyncDispose].filter((s) => s !== undefined),
);
// Prototypes of the language itself: the chain is followed down to one of these, which is named instead.
const BUILTIN_PROTOTYPES = new Map(
  [
    [Object.prototype, "Object"],
    [globalThis.Iterator?.prototype, "Iterator"],
    [Promise.prototype, "Promise"],
    [Error.prototype, "Error"],
  ].filter(([proto]) => proto !== undefined),
);

// Names on the prototype chain down to a built-in prototype, nearest first, each once.
function prototypeMembers(value) {
  const members = [];
  const seen = new Set(["constructor"]);
  for (let proto = Object.getPrototypeOf(value); proto && !BUILTIN_PROTOTYPES.has(proto); ) {
    for (const key of Reflect.ownKeys(proto)) {
      if (seen.has(key) || (typeof key === "symbol" && !CALLER_SYMBOLS.has(key))) continue;
      seen.add(key);
      const d = Object.getOwnPropertyDescriptor(proto, key);
      const kind = d.get ? "getter" : typeof d.value === "function" ? "method" : "value";
      members.push([keyName(key), kind]);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return members;
}

// The built-in prototype the chain reaches (Object, Iterator, Promise, ...), or null.
function inherited(value) {
  for (let proto = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    if (BUILTIN_PROTOTYPES.has(proto)) return BUILTIN_PROTOTYPES.get(proto);
  }
  return null;
}

function describeAt(value, patterns, path, depth) {
  const type = typeof value;
  if (matches(patterns, path)) {
    if (value === null) return { typeof: "object", value: null, varies: true };
    if (type !== "object") return { typeof: type, varies: true };
    return { typeof: "object", constructor: constructorName(value), varies: true };
  }
  if (value === null) return { typeof: "object", value: null };
  if (type !== "object") return primitive(value);
  const out = { typeof: "object", constructor: constructorName(value) };
  if (depth >= MAX_DEPTH) return { ...out, truncated: true };
  const child = (v, key) => describeAt(v, patterns, `${path}.${key}`, depth + 1);
  if (Array.isArray(value)) {
    out.isArray = true;
    out.items = value.map((item, i) => child(item, i));
    return out;
  }
  if (value instanceof ArrayBuffer) return { ...out, bytes: hex(new Uint8Array(value)) };
  if (ArrayBuffer.isView(value)) {
    return { ...out, bytes: hex(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
  }
  if (value instanceof Date) return { ...out, value: value.getTime() };
  if (value instanceof Map) {
    out.entries = Array.from(value, ([k, v], i) => [child(k, `${i}.key`), child(v, i)]);
    return out;
  }
  if (value instanceof Set) {
    out.items = Array.from(value, (item, i) => child(item, i));
    return out;
  }
  if (value instanceof Error) {
    out.name = value.name;
    out.message = matches(patterns, `${path}.message`) ? { varies: true } : value.message;
    if ("cause" in value) out.cause = child(value.cause, "cause");
  }
  const keys = Object.keys(value).filter((k) => !(value instanceof Error && k === "stack"));
  out.keys = keys;
  out.properties = Object.fromEntries(keys.map((k) => [k, child(value[k], k)]));
  const proto = Object.getPrototypeOf(value);
  if (proto !== null && proto !== Object.prototype && !(value instanceof Error)) {
    const members = prototypeMembers(value);
    out.prototype = members;
    out.inherits = inherited(value);
    out.getters = Object.fromEntries(
      members
        .filter(([, kind]) => kind === "getter")
        .map(([name]) => {
          try {
            return [name, child(value[name], name)];
          } catch (error) {
            return [name, { throws: describeError(error) }];
          }
        }),
    );
  }
  return out;
}

// What a caught error looks like: its constructor, name, message and own enumerable keys.
export function describeError(error, varies = []) {
  return describe(error, varies);
}

// Runs `fn` (sync or async) and describes what it returned or threw: {"returns": ...} or {"throws": ...}.
export async function outcome(fn, varies = []) {
  try {
    const value = await fn();
    return { returns: describe(value, varies) };
  } catch (error) {
    return { throws: describe(error, varies) };
  }
}

// The same for a synchronous call, so nothing is awaited (a thenable result is described as it is).
export function outcomeSync(fn, varies = []) {
  try {
    return { returns: describe(fn(), varies) };
  } catch (error) {
    return { throws: describe(error, varies) };
  }
}
