// Service Binding and Durable Object stub RPC: what a caller receives, and what it catches.
import { describe, outcome } from "./describe.js";

class Plain {
  constructor() {
    this.x = 1;
  }
}

// What calling an RPC method returns before it is awaited.
function pending(value) {
  return {
    typeof: typeof value,
    is_promise: value instanceof Promise,
    has_then: typeof value?.then === "function",
  };
}

export async function recordServiceBinding(peer) {
  const out = {};
  out.binding = { typeof: typeof peer, constructor: peer?.constructor?.name ?? null };
  out.pending_call = pending(peer.object());
  const results = [
    "object",
    "array",
    "nothing",
    "undefinedValue",
    "noReturn",
    "date",
    "bytes",
    "arrayBuffer",
    "map",
    "set",
    "bigint",
    "numbers",
    "text",
    "errorValue",
    "asyncValue",
    "plainClassInstance",
    "symbol",
    "throwsError",
    "throwsTypeError",
    "throwsRangeError",
    "throwsCustom",
    "throwsErrorWithProperties",
    "throwsString",
    "throwsObject",
  ];
  out.calls = {};
  for (const name of results) out.calls[name] = await outcome(() => peer[name]());
  out.calls.fn = await outcome(async () => {
    const f = await peer.fn();
    return { received: describe(f), called: await f(41) };
  });
  out.calls.objectWithFunction = await outcome(async () => {
    const value = await peer.objectWithFunction();
    return { received: describe(value), called: await value.call() };
  });
  out.calls.rpcTarget = await outcome(async () => {
    const counter = await peer.rpcTarget();
    return { received: { typeof: typeof counter }, first: await counter.increment(), second: await counter.increment() };
  });
  out.missing_method = await outcome(() => peer.noSuchMethod());
  out.getter_property = await outcome(async () => await peer.property);
  out.missing_property = await outcome(async () => await peer.noSuchProperty);
  out.fetch_on_entrypoint_without_fetch = await outcome(async () => (await peer.fetch("http://peer/")).status);
  out.echo = {
    primitives: await outcome(() => peer.echo(null, undefined, true, 1, 0.5, "s", 2n ** 64n)),
    containers: await outcome(() =>
      peer.echo({ a: undefined, b: [undefined] }, new Map([["k", 1]]), new Set([1]), new Date(0), new Uint8Array([7])),
    ),
    no_arguments: await outcome(() => peer.echo()),
    trailing_undefined: await outcome(() => peer.echo(1, undefined)),
  };
  out.argument_not_cloneable = {
    class_instance: await outcome(() => peer.echo(new Plain())),
    symbol: await outcome(() => peer.echo(Symbol("s"))),
    weakmap: await outcome(() => peer.echo(new WeakMap())),
  };
  return out;
}

export async function recordStubRpc(stub) {
  const out = {};
  out.pending_call = pending(stub.rpcValue());
  out.value = await outcome(() => stub.rpcValue());
  out.undefined_value = await outcome(() => stub.rpcUndefined());
  out.thrown = await outcome(() => stub.rpcThrows());
  out.missing_method = await outcome(() => stub.noSuchMethod());
  return out;
}
