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
  // Then the refusals after the type check: workerd's Date conversion (a kj::Date is 64-bit nanoseconds, about
  // 1677 to 2262, whatever its messages say), then setAlarm's own refusal of times <= 0.
  for (const [name, value] of Object.entries(OUT_OF_REACH)) {
    out[`setAlarm_${name}`] = await outcome(() => storage.setAlarm(value));
  }
  out.getAlarm_after_refusals = await outcome(() => storage.getAlarm());
  out.getAlarm_is_a_promise = storage.getAlarm() instanceof Promise;
  // A fractional time is cut to the millisecond; the latest time accepted is kept as that millisecond.
  out.setAlarm_latest = await outcome(() => storage.setAlarm(LATEST));
  out.getAlarm_after_set_latest = await outcome(() => storage.getAlarm());
  // A time already past (but after 0) is kept as now: Date.now(), which does not move between the calls.
  const before = Date.now();
  out.setAlarm_past = await outcome(() => storage.setAlarm(1));
  const past = await storage.getAlarm();
  out.getAlarm_after_set_past_is_now = past >= before && past <= Date.now();
  await storage.deleteAlarm();
  return out;
}

// The greatest number below workerd's limit (2**63 - 1 nanoseconds, as the double 9223372036854.775390625 ms).
const LATEST = 9223372036854.773;

// Values setAlarm refuses though they are numbers or Dates, or which look like one but are not.
const OUT_OF_REACH = {
  after_latest: 9223372036854.775,
  next_millisecond_after_latest: 9223372036855,
  end_of_date_range: new Date(8.64e15),
  beyond_date_range: 1e16,
  earliest_in_reach: -9223372036854.773,
  before_earliest: -9223372036854.775,
  start_of_date_range: new Date(-8.64e15),
  infinity: Infinity,
  negative_infinity: -Infinity,
  invalid_date: new Date(NaN),
  zero: 0,
  negative_zero: -0,
  under_one_millisecond: 0.999,
  negative: -1,
  date_before_1970: new Date(-1000),
  bigint: 4102444800000n,
  null: null,
  boolean: true,
  numeric_string: "4102444800000",
  value_of_object: { valueOf: () => FAR },
};

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
