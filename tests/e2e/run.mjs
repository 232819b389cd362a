// Runs the GUI end-to-end tests (tests/e2e/*.test.mjs) one after another against the real app.
// Each test file default-exports an async function; a throw fails it. Expects the environment
// scripts/e2e-gui.sh sets up (Xvfb, D-Bus session, WebKitWebDriver). Usage:
//   node tests/e2e/run.mjs [name-filter ...]
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TEST_TIMEOUT_MS = Number(process.env.E2E_TEST_TIMEOUT_MS || 180000);

const filters = process.argv.slice(2);
const files = readdirSync(HERE)
  .filter((f) => f.endsWith(".test.mjs"))
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  console.error(`no e2e test matches ${JSON.stringify(filters)}`);
  process.exit(2);
}

function withTimeout(promise, ms, name) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// On a signal, exit through process.exit so the helpers' "exit" hooks stop what they started.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.log(`interrupted by ${signal}`);
    process.exit(130);
  });
}

let passed = 0;
let failed = 0;
for (const file of files) {
  const name = file.replace(/\.test\.mjs$/, "");
  const started = Date.now();
  console.log(`--- ${name}`);
  try {
    const mod = await import(pathToFileURL(join(HERE, file)).href);
    if (typeof mod.default !== "function") throw new Error(`${file} has no default-exported test function`);
    await withTimeout(mod.default({ log: (...a) => console.log(`    ${name}:`, ...a) }), TEST_TIMEOUT_MS, name);
    passed++;
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name} (${Date.now() - started} ms)\n${err instanceof Error ? err.stack : err}`);
    if (err instanceof Error && err.cause instanceof Error) console.log(`caused by: ${err.cause.stack}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
