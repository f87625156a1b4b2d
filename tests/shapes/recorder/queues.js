// Queues: what a producer's send/sendBatch return and refuse, and what a consumer's handler is given.
import { describe, outcome, outcomeSync } from "./describe.js";

// The bodies the consumer must see, in order (JSON is the default content type since 2024-03-18; the last
// three choose theirs explicitly). Every one is sent in a single sendBatch, so they arrive as one batch.
export const BODIES = [
  { body: { a: 1, nested: { list: [1, "two", null, true] }, empty: {} } },
  { body: [1, "x", null, 0.5, false] },
  { body: "text 日本 🎉" },
  { body: "" },
  { body: 42 },
  { body: 0.5 },
  { body: -0 },
  { body: 2 ** 53 + 1 },
  { body: true },
  { body: null },
  { body: { kept: 1, dropped: undefined, fn_dropped: () => 1 } },
  { body: [undefined, NaN, Infinity] },
  { body: new Date(0) },
  { body: { big: 1e21, small: 1e-7 } },
  { body: new Date(0), contentType: "v8" },
  { body: "plain text", contentType: "text" },
  { body: new Uint8Array([0, 255, 16]), contentType: "bytes" },
];

// Message index -> what the consumer does with it on the first delivery.
const ACK = 0;
const RETRY = 1;
const RETRY_NO_OPTIONS = 2;

// Paths whose values differ between runs (ids are random, timestamps are the send time), and the backlog
// metrics, which are the queue service's (here miniflare's broker, which always answers zero).
const BATCH_VARIES = ["messages.*.id", "messages.*.timestamp", "metadata.metrics.*"];
const SEND_VARIES = ["metadata.metrics.*"];

export async function recordProducer(env) {
  const out = {};
  out.binding = describe(env.BODIES);
  out.sendBatch_to_consumer = await outcome(() => env.BODIES.sendBatch(BODIES), SEND_VARIES);
  out.send_to_class_consumer = await outcome(() => env.CLASSQ.send({ to: "the class consumer" }), SEND_VARIES);
  out.send = await outcome(() => env.PARKED.send({ a: 1 }), SEND_VARIES);
  out.send_with_options = await outcome(() => env.PARKED.send("x", { contentType: "text", delaySeconds: 0 }), SEND_VARIES);
  out.sendBatch = await outcome(() => env.PARKED.sendBatch([{ body: 1 }, { body: 2 }]), SEND_VARIES);
  out.sendBatch_empty = await outcome(() => env.PARKED.sendBatch([]), SEND_VARIES);
  out.send_undefined = await outcome(() => env.PARKED.send(undefined), SEND_VARIES);
  out.send_function = await outcome(() => env.PARKED.send(() => 1), SEND_VARIES);
  out.send_bigint = await outcome(() => env.PARKED.send(1n), SEND_VARIES);
  out.send_symbol = await outcome(() => env.PARKED.send(Symbol("s")), SEND_VARIES);
  out.send_cycle = await outcome(() => {
    const cycle = {};
    cycle.self = cycle;
    return env.PARKED.send(cycle);
  });
  out.send_map_json = await outcome(() => env.PARKED.send(new Map([["k", 1]])), SEND_VARIES);
  out.send_bad_content_type = await outcome(() => env.PARKED.send("x", { contentType: "yaml" }), SEND_VARIES);
  out.send_text_not_string = await outcome(() => env.PARKED.send(1, { contentType: "text" }), SEND_VARIES);
  // Not recorded: size and count limits (128 KB a message, 100 messages and 256 KB a batch) and delaySeconds
  // bounds. workerd leaves them to the queue service, and the local one (miniflare's broker) does not
  // check them, so a run here cannot say what Cloudflare answers (ADR-0104).
  return out;
}

// What a queue handler was called with (its arguments, and `this` for a class).
export function describeCall(args, self) {
  const seen = {
    arguments_length: args.length,
    batch: describe(args[0], BATCH_VARIES),
    env: args[1] === undefined || args[1] === null ? describe(args[1]) : { keys: Object.keys(args[1]).sort() },
    ctx: describe(args[2]),
  };
  if (self !== undefined) {
    seen.this_env_keys = self.env ? Object.keys(self.env).sort() : describe(self.env);
    seen.this_ctx = describe(self.ctx);
  }
  return seen;
}

// The consumer of the BODIES queue (a default-export object): the first delivery acks one message, retries
// two (one with options, one without) and leaves the rest to the implicit ack; the retried two come back.
export function consumeBodies(batch, seen) {
  const delivery = batch.messages[0].attempts;
  if (delivery === 1) {
    const messages = batch.messages;
    seen.ack_returns = outcomeSync(() => messages[ACK].ack());
    seen.retry_returns = outcomeSync(() => messages[RETRY].retry({ delaySeconds: 0 }));
    seen.retry_without_options_returns = outcomeSync(() => messages[RETRY_NO_OPTIONS].retry());
  } else {
    seen.ackAll_returns = outcomeSync(() => batch.ackAll());
  }
  return `queue-object-${delivery}`;
}

// The consumer of the CLASS queue: retryAll on the first delivery, ackAll on the second.
export function consumeClass(batch, seen) {
  const delivery = batch.messages[0].attempts;
  if (delivery === 1) {
    seen.retryAll_returns = outcomeSync(() => batch.retryAll({ delaySeconds: 0 }));
  } else {
    seen.ackAll_returns = outcomeSync(() => batch.ackAll());
  }
  return `queue-class-${delivery}`;
}
