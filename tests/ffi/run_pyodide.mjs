// Runs the FFI cases in real Pyodide (the npm package pinned in package-lock.json) and prints each case's
// outcome as JSON on stdout (ADR-0103). Offline: Pyodide loads from node_modules/pyodide, the cases need no
// Python packages, and fetch is replaced by a function that throws so a download attempt fails loudly.
//
//   node tests/ffi/run_pyodide.mjs            # outcomes on stdout
//   node tests/ffi/run_pyodide.mjs --record   # also rewrites tests/ffi/pyodide-outcomes.json
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const indexURL = dirname(require.resolve("pyodide/package.json")) + "/";
const { loadPyodide } = await import(join(indexURL, "pyodide.mjs"));

// Workers run in UTC; Date's text must not depend on this machine's zone.
process.env.TZ = "UTC";

globalThis.fetch = (resource) => {
  throw new Error(`the FFI cases run offline; Pyodide tried to fetch ${resource}`);
};

// A rejection nobody handles is Pyodide's own reaction failing (see the case
// await_rejected_with_non_errors_never_settles); it is listed in the record instead of ending the process.
const unhandled = [];
process.on("unhandledRejection", (reason) => {
  unhandled.push(String(reason).trim().split("\n").at(-1));
});

async function run() {
  const started = performance.now();
  const pyodide = await loadPyodide({ indexURL, packages: [] });
  const loadedMs = Math.round(performance.now() - started);
  pyodide.FS.mkdirTree("/ffi");
  for (const name of readdirSync(here)) {
    if (name.startsWith("ffi_") && name.endsWith(".py")) {
      pyodide.FS.writeFile(`/ffi/${name}`, readFileSync(join(here, name)));
    }
  }
  const outcomes = JSON.parse(
    await pyodide.runPythonAsync(
      "import sys\nsys.path.insert(0, '/ffi')\nimport ffi_runner\nawait ffi_runner.run_all_json()",
    ),
  );
  // One line per case, so a change in the record is a readable diff.
  const lines = Object.entries(outcomes).map(([name, value]) => `  ${JSON.stringify(name)}: ${JSON.stringify(value)}`);
  const text =
    `{\n "pyodide": ${JSON.stringify(pyodide.version)},\n` +
    ` "unhandled_rejections": ${JSON.stringify(unhandled)},\n` +
    ` "outcomes": {\n${lines.join(",\n")}\n }\n}\n`;
  if (process.argv.includes("--record")) {
    writeFileSync(join(here, "pyodide-outcomes.json"), text);
  }
  const count = Object.keys(outcomes).length;
  process.stderr.write(`pyodide ${pyodide.version} loaded in ${loadedMs} ms; ${count} cases\n`);
  process.stdout.write(text);
}

try {
  await run();
} catch (error) {
  // Pyodide's minified source would fill the terminal if Node printed this itself.
  process.stderr.write(`run_pyodide.mjs: ${String(error?.stack ?? error).slice(0, 4000)}\n`);
  process.exit(1);
}
