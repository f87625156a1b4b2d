// Analytics Engine: what writeDataPoint returns, for a good data point and for each kind of bad one.
// Each case is one request, so the driver can tell which event (or which refusal) it caused.
import { describe, outcomeSync } from "./describe.js";

export const AE_CASES = {
  full: { blobs: ["a", "日本", null, new Uint8Array([0x68, 0x69]).buffer], doubles: [1, 0.5, -2], indexes: ["idx"] },
  empty_object: {},
  no_argument: undefined,
  index_bytes: { indexes: [new Uint8Array([1, 2, 3]).buffer] },
  index_null: { indexes: [null] },
  doubles_coerced: { doubles: ["3", true, null] },
  doubles_nan: { doubles: ["x"] },
  twenty_blobs: { blobs: Array.from({ length: 20 }, (_, i) => `b${i}`) },
  twenty_one_blobs: { blobs: Array.from({ length: 21 }, (_, i) => `b${i}`) },
  twenty_one_doubles: { doubles: Array.from({ length: 21 }, (_, i) => i) },
  two_indexes: { indexes: ["a", "b"] },
  index_96_bytes: { indexes: ["i".repeat(96)] },
  index_97_bytes: { indexes: ["i".repeat(97)] },
  blobs_16000_bytes: { blobs: ["x".repeat(16000)] },
  blobs_16001_bytes: { blobs: ["x".repeat(16001)] },
  blob_number: { blobs: [5] },
  unknown_field: { other: 1 },
  not_an_object: "text",
};

export function recordAnalytics(dataset, name) {
  if (name === undefined) return { binding: describe(dataset), cases: Object.keys(AE_CASES) };
  const point = AE_CASES[name];
  return name === "no_argument" ? outcomeSync(() => dataset.writeDataPoint()) : outcomeSync(() => dataset.writeDataPoint(point));
}
