// Durable Object alarms: getAlarm/setAlarm/deleteAlarm results, and what the alarm handler receives.
import { describe, outcome } from "./describe.js";

// A fixed instant far ahead (2100-01-01T00:00:00Z), so getAlarm() answers the same number every run.
const FAR = 4102444800000;

export async function recordAlarmCalls(storage) {
  const out = {};
  out.getAlarm_never_set = await outcome(() => storage.getAlarm());
  out.setAlarm_number = await outcome(() => storage.setAlarm(FAR));
  out.getAlarm_after_set_number = await outcome(() => storage.getAlarm());
  out.setAlarm_date = await outcome(() => storage.setAlarm(new Date(FAR + 1000)));
  out.getAlarm_after_set_date = await outcome(() => storage.getAlarm());
  out.setAlarm_fraction = await outcome(() => storage.setAlarm(FAR + 0.75));
  out.getAlarm_after_set_fraction = await outcome(() => storage.getAlarm());
  out.deleteAlarm = await outcome(() => storage.deleteAlarm());
  out.getAlarm_after_delete = await outcome(() => storage.getAlarm());
  out.deleteAlarm_when_none = await outcome(() => storage.deleteAlarm());
  out.setAlarm_string = await outcome(() => storage.setAlarm("soon"));
  out.setAlarm_nan = await outcome(() => storage.setAlarm(NaN));
  out.setAlarm_no_argument = await outcome(() => storage.setAlarm());
  out.getAlarm_after_refusals = await outcome(() => storage.getAlarm());
  out.getAlarm_is_a_promise = storage.getAlarm() instanceof Promise;
  return out;
}

// Arms an alarm that is already due; the handler (below) fails its first run, so workerd retries it.
export async function armDueAlarm(storage) {
  await storage.put("alarm-runs", 0);
  await storage.setAlarm(Date.now() - 1000);
}

// The Durable Object's alarm(...) handler: reports its arguments on each run, throwing on the first.
export async function onAlarm(storage, args, report) {
  const runs = (await storage.get("alarm-runs")) ?? 0;
  await storage.put("alarm-runs", runs + 1);
  const seen = {
    arguments_length: args.length,
    arguments: args.map((a) => describe(a, ["scheduledTime"])), // when it was due: the time of arming
    getAlarm_inside_handler: (await outcome(() => storage.getAlarm())).returns,
  };
  await report(`alarm-run-${runs + 1}`, seen);
  if (runs === 0) throw new Error("first alarm run fails on purpose");
}
