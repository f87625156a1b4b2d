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
  out.calls.fn = await outcome(() => peer.fn());
  out.calls.fn_called = await outcome(async () => (await peer.fn())(41));
  out.calls.objectWithFunction = await outcome(() => peer.objectWithFunction());
  out.calls.objectWithFunction_called = await outcome(async () => (await peer.objectWithFunction()).call());
  out.calls.rpcTarget = await outcome(() => peer.rpcTarget());
  out.calls.rpcTarget_called_twice = await outcome(async () => {
    const counter = await peer.rpcTarget();
    return [await counter.increment(), await counter.increment()];
  });
  out.missing_method = await outcome(() => peer.noSuchMethod());
  out.getter_property = await outcome(async () => await peer.property);
  out.missing_property = await outcome(async () => await peer.noSuchProperty);
  out.fetch_on_entrypoint_without_fetch = await outcome(async () => (await peer.fetch("http://peer/")).status);
  // echo answers how the peer saw its arguments (its own describe()), recorded as it arrives.
  const echo = async (...args) => {
    try {
      return { returns: await peer.echo(...args) };
    } catch (error) {
      return { throws: describe(error) };
    }
  };
  out.echo = {
    primitives: await echo(null, undefined, true, 1, 0.5, "s", 2n ** 64n),
    containers: await echo({ a: undefined, b: [undefined] }, new Map([["k", 1]]), new Set([1]), new Date(0), new Uint8Array([7])),
    no_arguments: await echo(),
    trailing_undefined: await echo(1, undefined),
  };
  out.argument_not_cloneable = {
    class_instance: await echo(new Plain()),
    symbol: await echo(Symbol("s")),
    weakmap: await echo(new WeakMap()),
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
