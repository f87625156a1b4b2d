// The Worker on the other end of the Service Binding: an entrypoint class whose methods return and throw
// each kind of value, so the caller can record what arrives.
import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
import { describe } from "./describe.js";

class Plain {
  constructor() {
    this.x = 1;
  }
}

class Counter extends RpcTarget {
  constructor() {
    super();
    this.count = 0;
  }

  increment() {
    this.count += 1;
    return this.count;
  }
}

class CustomError extends Error {
  constructor(message) {
    super(message);
    this.name = "CustomError";
    this.code = "E_CUSTOM";
  }
}

export class Peer extends WorkerEntrypoint {
  object() {
    return { a: 1, text: "x", nested: { list: [1, null], flag: true }, missing: undefined };
  }
  array() {
    return [1, "two", null, undefined, [3]];
  }
  nothing() {
    return null;
  }
  undefinedValue() {
    return undefined;
  }
  noReturn() {}
  date() {
    return new Date(86400000);
  }
  bytes() {
    return new Uint8Array([0, 255, 16]);
  }
  arrayBuffer() {
    return new Uint8Array([1, 2]).buffer;
  }
  map() {
    return new Map([
      ["k", 1],
      [2, { v: [true] }],
    ]);
  }
  set() {
    return new Set([1, "a"]);
  }
  bigint() {
    return 2n ** 64n;
  }
  numbers() {
    return [0.5, -0, NaN, Infinity, 2 ** 53 + 2];
  }
  text() {
    return "text 日本 🎉";
  }
  errorValue() {
    return new TypeError("returned, not thrown");
  }
  async asyncValue() {
    return { later: true };
  }
  plainClassInstance() {
    return new Plain();
  }
  rpcTarget() {
    return new Counter();
  }
  fn() {
    return (x) => x + 1;
  }
  objectWithFunction() {
    return { value: 1, call: () => 2 };
  }
  symbol() {
    return Symbol("s");
  }
  throwsError() {
    throw new Error("plain failure");
  }
  throwsTypeError() {
    throw new TypeError("bad type");
  }
  throwsRangeError() {
    throw new RangeError("out of range");
  }
  throwsCustom() {
    throw new CustomError("custom failure");
  }
  throwsErrorWithProperties() {
    const error = new Error("with properties");
    error.status = 409;
    error.detail = { field: "x" };
    return Promise.reject(error);
  }
  throwsString() {
    throw "a string";
  }
  throwsObject() {
    throw { code: 1 };
  }
  echo(...args) {
    return { count: args.length, seen: args.map((a) => describe(a)) };
  }
  get property() {
    return "a getter";
  }
}

export default {
  fetch() {
    return new Response("peer");
  },
};
