// Reads one wrangler config with the pinned wrangler's own reader (`unstable_readConfig`), offline, and prints
// what wrangler made of it as one JSON object (ADR-0182):
//
//   node tests/deploy/wrangler_read_config.mjs path/to/wrangler.jsonc
//
//   fields      the fields of the config wrangler returns: with "env" and "$schema", the top-level fields it
//               knows (its own check compares the file's fields with these)
//   unexpected  each "Unexpected fields found in <section> field: ..." warning, as {section: [field, ...]}
//   requests    each request wrangler tried, all refused here: on unexpected fields wrangler asks the npm
//               registry for a newer version (the caller points TMPDIR at an empty folder, so wrangler's
//               cached answer from another run is not read either)
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const requests = [];
for (const mod of [http, https]) {
  for (const name of ["get", "request"]) {
    mod[name] = (target) => {
      requests.push(typeof target === "object" ? `${target.host ?? target.hostname}${target.path ?? ""}` : `${target}`);
      throw new Error("offline");
    };
  }
}
globalThis.fetch = async (target) => {
  requests.push(String(target));
  throw new Error("offline");
};

const said = [];
for (const name of ["log", "info", "warn", "error", "debug"]) {
  console[name] = (...args) => said.push(args.map(String).join(" "));
}
const wrangler = createRequire(path.join(ROOT, "node_modules/wrangler/package.json"))("./wrangler-dist/cli.js");
const config = wrangler.unstable_readConfig({ config: process.argv[2] });
const unexpected = {};
for (const line of said.join("\n").split("\n")) {
  const found = /Unexpected fields found in (\S+) field: (.*)$/.exec(line);
  if (found) unexpected[found[1]] = [...found[2].matchAll(/"([^"]*)"/g)].map((m) => m[1]);
}
await new Promise((resolve) => setTimeout(resolve, 50)); // the version check starts after readConfig returns
process.stdout.write(`${JSON.stringify({ fields: Object.keys(config).sort(), unexpected, requests })}\n`);
