// The recorder Worker: each route exercises one platform object and answers with what it saw (ADR-0104).
import { DurableObject } from "cloudflare:workers";
import { armDueAlarm, onAlarm, recordAlarmCalls } from "./alarms.js";
import { recordAnalytics } from "./analytics.js";
import { recordD1 } from "./d1.js";
import { describe } from "./describe.js";
import { recordProducer } from "./queues.js";
import { report } from "./report.js";
import { recordServiceBinding, recordStubRpc } from "./rpc.js";
import { recordSql } from "./sql.js";

export class Recorder extends DurableObject {
  sql() {
    return recordSql(this.ctx);
  }
  alarmCalls() {
    return recordAlarmCalls(this.ctx.storage);
  }
  armDueAlarm() {
    return armDueAlarm(this.ctx.storage);
  }
  async alarm(...args) {
    await onAlarm(this.ctx.storage, args, (key, value) => report(this.env.SINK, key, value));
  }
  describeContext() {
    return { ctx: describe(this.ctx) };
  }
  rpcValue() {
    return { from: "durable object", list: [1, null] };
  }
  rpcUndefined() {}
  rpcThrows() {
    throw new RangeError("thrown in the durable object");
  }
}

function stub(env, name) {
  return env.RECORDER.get(env.RECORDER.idFromName(name));
}

const ROUTES = {
  "/sql": (env) => stub(env, "sql").sql(),
  "/alarm-calls": (env) => stub(env, "alarm-calls").alarmCalls(),
  "/arm-due-alarm": async (env) => (await stub(env, "alarm-due").armDueAlarm()) ?? null,
  "/durable-object-context": (env) => stub(env, "context").describeContext(),
  "/d1": (env) => recordD1(env.DB),
  "/queue-producer": (env) => recordProducer(env),
  "/service-binding": (env) => recordServiceBinding(env.PEER),
  "/stub-rpc": (env) => recordStubRpc(stub(env, "rpc")),
  "/analytics-engine": (env, url) => recordAnalytics(env.AE, url.searchParams.get("case") ?? undefined),
};

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const route = ROUTES[url.pathname];
    if (route === undefined) return new Response(`no route ${url.pathname}`, { status: 404 });
    return Response.json(await route(env, url));
  },
};
