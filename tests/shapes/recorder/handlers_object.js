// A Worker whose default export is a plain object: its queue and scheduled handlers report their arguments.
import { describe } from "./describe.js";
import { consumeBodies, describeCall } from "./queues.js";
import { report } from "./report.js";

export default {
  async queue(...args) {
    const seen = describeCall(args);
    const key = consumeBodies(args[0], seen);
    await report(args[1].SINK, key, seen);
  },
  async scheduled(...args) {
    const seen = describeCall(args);
    seen.controller = describe(args[0]);
    delete seen.batch;
    await report(args[1].SINK, "scheduled-object", seen);
  },
};
