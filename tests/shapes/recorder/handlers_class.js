// A Worker whose default export is a WorkerEntrypoint class: what its queue and scheduled methods receive.
import { WorkerEntrypoint } from "cloudflare:workers";
import { describe } from "./describe.js";
import { consumeClass, describeCall } from "./queues.js";
import { report } from "./report.js";

export default class ClassHandlers extends WorkerEntrypoint {
  async queue(...args) {
    const seen = describeCall(args, this);
    const key = consumeClass(args[0], seen);
    await report(this.env.SINK, key, seen);
  }

  async scheduled(...args) {
    const seen = describeCall(args, this);
    seen.controller = describe(args[0]);
    delete seen.batch;
    await report(this.env.SINK, "scheduled-class", seen);
  }
}
