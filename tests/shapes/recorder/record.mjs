// Runs the recorder Workers on the workerd binary that the pinned wrangler installs, through miniflare's
// Node API (wrangler's own dependency), offline, and prints the record as JSON (ADR-0104).
//
//   node tests/shapes/recorder/record.mjs > tests/shapes/workerd-shapes.json
//
// Nothing leaves the machine: `cf: false` stops miniflare fetching its `cf` object, and every Worker's
// outbound fetch goes to a function here that refuses it and notes it in the record (which must stay empty).
import { createRequire } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../../..");
const fromWrangler = createRequire(path.join(ROOT, "node_modules/wrangler/package.json"));
const { Miniflare, Log, LogLevel, Response } = fromWrangler("miniflare");
const fromMiniflare = createRequire(fromWrangler.resolve("miniflare"));
const workerd = fromMiniflare("workerd");

const WAIT_MS = 15_000;
const COMPATIBILITY_DATE = workerd.compatibilityDate; // the newest date the installed binary knows

// Findings the Workers report through the SINK binding, by key, each awaited by name.
class Reports {
  #values = new Map();
  #waiters = new Map();

  put(key, value) {
    if (this.#values.has(key)) throw new Error(`report ${key} arrived twice`);
    this.#values.set(key, value);
    this.#waiters.get(key)?.(value);
  }

  async get(key) {
    if (this.#values.has(key)) return this.#values.get(key);
    let timer;
    const arrived = new Promise((resolve) => this.#waiters.set(key, resolve));
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`report ${key} did not arrive within ${WAIT_MS} ms`)), WAIT_MS);
    });
    try {
      return await Promise.race([arrived, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

// Analytics Engine events (what workerd posts to the dataset's service) and refusals (what it logs).
class AnalyticsEvents {
  #events = [];
  #waiter = null;

  push(event) {
    this.#events.push(event);
    this.#waiter?.();
  }

  async next() {
    if (this.#events.length > 0) return this.#events.shift();
    let timer;
    try {
      await Promise.race([
        new Promise((resolve) => {
          this.#waiter = resolve;
        }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("no Analytics Engine event or refusal")), WAIT_MS);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.#waiter = null;
    }
    return this.#events.shift();
  }
}

// miniflare's own log goes to stderr, so stdout carries the record alone.
class StderrLog extends Log {
  log(message) {
    process.stderr.write(`${message}\n`);
  }
}

// An event's bytes fields (indexes, blobs) arrive as arrays of byte values: recorded as text when they are
// UTF-8, as hex otherwise, and by length alone past 64 bytes.
function eventBytes(bytes) {
  if (bytes.length > 64) return { length: bytes.length };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes)) };
  } catch {
    return { hex: Buffer.from(bytes).toString("hex") };
  }
}

// An event's fields as the record keeps them: index1, blobs by position (only those set), and the 20 doubles
// (always present, 0 by default) up to the last one that is not 0.
function eventFields(fields) {
  const out = { schemaVersion: fields.schemaVersion, index1: eventBytes(fields.index1) };
  const doubles = Array.from({ length: 20 }, (_, i) => fields[`double${i + 1}`]);
  while (doubles.length > 0 && doubles.at(-1) === 0) doubles.pop();
  out.doubles = doubles;
  out.blobs = Object.fromEntries(
    Object.entries(fields)
      .filter(([k]) => k.startsWith("blob"))
      .map(([k, v]) => [k, eventBytes(v)]),
  );
  const known = new Set(["schemaVersion", "index1", ...Object.keys(out.blobs)]);
  const other = Object.keys(fields).filter((k) => !known.has(k) && !/^double\d+$/.test(k));
  if (other.length > 0) out.other = Object.fromEntries(other.map((k) => [k, fields[k]]));
  return out;
}

// JSON with two-space indents, each value that fits in 100 characters on one line.
function format(value, indent = "") {
  const flat = JSON.stringify(value);
  if (flat === undefined) throw new Error("the record holds a value JSON cannot carry");
  if (flat.length + indent.length <= 100 || value === null || typeof value !== "object") return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => inner + format(v, inner)).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${format(v, inner)}`);
  return `{\n${entries.join(",\n")}\n${indent}}`;
}

function modules(...names) {
  return names.map((name) => ({ type: "ESModule", path: path.join(HERE, name) }));
}

const SHARED = ["describe.js", "report.js"];

async function main() {
  const reports = new Reports();
  const analytics = new AnalyticsEvents();
  const outbound = [];
  const refuseOutbound = (request) => {
    outbound.push(request.url);
    return new Response("offline", { status: 599 });
  };
  const sink = async (request) => {
    const { key, value } = await request.json();
    reports.put(key, value);
    return new Response("ok");
  };
  const analyticsSink = async (request) => {
    const event = await request.json();
    // Bytes fields arrive as arrays of numbers; the account, the dataset name and the time are not the
    // caller's, so they stay out of the record.
    const { accountId, timestamp, dataset, ...fields } = event;
    analytics.push({ delivered: eventFields(fields) });
    return new Response("ok");
  };
  const common = { modules: true, compatibilityDate: COMPATIBILITY_DATE, outboundService: refuseOutbound };
  const mf = new Miniflare({
    cf: false,
    verbose: true, // workerd logs an Analytics Engine refusal only at this level (ADR-0104)
    log: new StderrLog(LogLevel.WARN),
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr]) {
        createInterface({ input: stream }).on("line", (line) => {
          const refused = /jsg\.(\w+): (writeDataPoint\(\).*)$/.exec(line);
          if (refused) analytics.push({ refused: { name: refused[1], message: refused[2] } });
        });
      }
    },
    workers: [
      {
        ...common,
        name: "recorder",
        modules: modules("recorder.js", "alarms.js", "analytics.js", "d1.js", "queues.js", "rpc.js", "sql.js", ...SHARED),
        durableObjects: { RECORDER: { className: "Recorder", useSQLite: true } },
        d1Databases: { DB: "shapes-d1" },
        queueProducers: {
          BODIES: { queueName: "shapes-bodies" },
          CLASSQ: { queueName: "shapes-class" },
          PARKED: { queueName: "shapes-parked" },
        },
        serviceBindings: { PEER: { name: "peer", entrypoint: "Peer" }, SINK: sink },
        unsafeBindings: [
          {
            name: "AE",
            type: "analytics-engine",
            plugin: { package: path.join(HERE, "analytics_engine_plugin.mjs"), name: "workerd-analytics-engine" },
            options: { service: "analytics-sink" },
          },
        ],
      },
      { ...common, name: "peer", modules: modules("peer.js", ...SHARED) },
      {
        ...common,
        name: "object-handlers",
        modules: modules("handlers_object.js", "queues.js", ...SHARED),
        serviceBindings: { SINK: sink },
        queueConsumers: {
          "shapes-bodies": { maxBatchSize: 100, maxBatchTimeout: 0, maxRetries: 1, retryDelay: 0 },
        },
      },
      {
        ...common,
        name: "class-handlers",
        modules: modules("handlers_class.js", "queues.js", ...SHARED),
        serviceBindings: { SINK: sink },
        queueConsumers: { "shapes-class": { maxBatchSize: 1, maxBatchTimeout: 0, maxRetries: 1, retryDelay: 0 } },
      },
      {
        ...common,
        name: "analytics-sink",
        script: "export default { fetch(request, env) { return env.NODE.fetch(request); } };",
        serviceBindings: { NODE: analyticsSink },
      },
    ],
  });
  const started = performance.now();
  try {
    const get = async (route) => {
      const response = await mf.dispatchFetch(`http://recorder${route}`);
      const text = await response.text();
      if (!response.ok) throw new Error(`${route}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    // The alarm first: workerd retries a failed alarm after about two seconds, which overlaps the rest.
    await get("/arm-due-alarm");
    const record = {};
    record.durable_object_sql = await get("/sql");
    record.durable_object_context = await get("/durable-object-context");
    record.alarms = await get("/alarm-calls");
    record.d1 = await get("/d1");
    record.queue_producer = await get("/queue-producer");
    record.service_binding_rpc = await get("/service-binding");
    record.durable_object_stub_rpc = await get("/stub-rpc");
    const { binding, cases } = await get("/analytics-engine");
    record.analytics_engine = { binding, cases: {} };
    for (const name of cases) {
      const caller = await get(`/analytics-engine?case=${name}`);
      const platform = caller.throws ? null : await analytics.next();
      record.analytics_engine.cases[name] = { caller, ...platform };
    }
    const scheduledTime = new Date(1_700_000_000_000);
    const scheduled = {};
    for (const name of ["object-handlers", "class-handlers"]) {
      const worker = await mf.getWorker(name);
      const result = await worker.scheduled({ cron: "*/5 * * * *", scheduledTime });
      scheduled[name] = { result };
    }
    scheduled["object-handlers"].handler = await reports.get("scheduled-object");
    scheduled["class-handlers"].handler = await reports.get("scheduled-class");
    record.handlers = {
      scheduled,
      queue: {
        "object-handlers": { first: await reports.get("queue-object-1"), second: await reports.get("queue-object-2") },
        "class-handlers": { first: await reports.get("queue-class-1"), second: await reports.get("queue-class-2") },
      },
    };
    record.alarm_handler = { first_run: await reports.get("alarm-run-1"), retry: await reports.get("alarm-run-2") };
    record.outbound_requests = outbound;
    const about = {
      workerd: fromMiniflare("workerd/package.json").version,
      miniflare: fromWrangler("miniflare/package.json").version,
      wrangler: fromWrangler("./package.json").version,
      compatibility_date: COMPATIBILITY_DATE,
    };
    process.stderr.write(`recorded in ${Math.round(performance.now() - started)} ms\n`);
    process.stdout.write(`${format({ about, ...record })}\n`);
  } finally {
    await mf.dispose();
  }
}

await main();
