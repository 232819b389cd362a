// The launch order (src-tauri/launch-order.txt, named by src-tauri/build.rs and resolved by
// scripts/link/cc): which of the release binary's functions a launch runs, from the process's
// start to the idle window, found by running the app under callgrind in the GUI test environment
// (scripts/bench-app/launch-order.sh). The linker places them together at the front of the code,
// so the idle app keeps fewer of the binary's pages. Prints how many of the list's previous names
// the binary still has, as they are and by name alone (launchOrderMatch), and the code the new
// list covers.
// Environment: as scripts/e2e-gui.sh gives a runner (E2E_APP_BINARY, E2E_OUT_DIR), run by
// launch-order.sh; LAUNCH_ORDER_IDLE_S (default 5) is how long the window stays idle.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appBinary, outDir } from "../../tests/e2e/lib/env.mjs";
import { sleep, waitFor } from "../../tests/e2e/lib/webdriver.mjs";
import { LAUNCH_ORDER, functionsOf, launchOrderMatch } from "./lib.mjs";

const binary = appBinary();
const idleMs = Number(process.env.LAUNCH_ORDER_IDLE_S ?? 5) * 1000;

/** The names of the binary's functions that ran, from callgrind's uncompressed output. */
function ran(file) {
  const names = new Set();
  let object = "";
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("ob=")) object = line.slice(3);
    // `'2` marks a recursion level, not another function.
    else if (line.startsWith("fn=") && object === binary) names.add(line.slice(3).replace(/'\d+$/, ""));
  }
  return names;
}

const work = mkdtempSync(join(tmpdir(), "bridle-launch-order-"));
for (const dir of ["data", "workspace"]) mkdirSync(join(work, dir));
// A provider that is never asked, as the app benchmark has it.
writeFileSync(join(work, "config.toml"), '[provider]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "bench"\n');
const out = join(outDir(), "callgrind.out");
const app = spawn(
  "valgrind",
  ["--tool=callgrind", "--demangle=no", "--compress-strings=no", "--compress-pos=no", `--callgrind-out-file=${out}`, `--log-file=${out}.log`,
    binary, "--data-dir", join(work, "data"), "--workspace", join(work, "workspace"), "--config", join(work, "config.toml")],
  { stdio: "ignore" },
);
const exited = new Promise((resolve) => app.on("exit", resolve));
// Idle: the window's first screen has its data (the snapshot read ends the launch's phases).
const logs = join(work, "data", "logs");
const snapshotRead = () =>
  existsSync(logs) && readdirSync(logs).some((f) => readFileSync(join(logs, f), "utf8").includes("phase session snapshot read"));
await waitFor(snapshotRead, "the window's first snapshot (under callgrind)", 300000);
await sleep(idleMs);
app.kill("SIGINT");
await Promise.race([exited, sleep(60000).then(() => app.kill("SIGKILL"))]);
await exited;

const sizes = functionsOf(binary);
const names = [...ran(out)].filter((n) => sizes.has(n)).sort();
if (names.length < 500) throw new Error(`only ${names.length} of the binary's functions ran: is it the release build?`);
if (existsSync(LAUNCH_ORDER)) {
  const { exact, byName, all } = launchOrderMatch(LAUNCH_ORDER, binary);
  console.log(`the previous list: of its ${all} names, ${exact} are in this binary as they are, ${byName} more by name`);
}
const kib = (bytes) => (bytes / 1024).toFixed(0);
const covered = names.reduce((sum, n) => sum + sizes.get(n), 0);
const all = [...sizes.values()].reduce((a, b) => a + b, 0);
writeFileSync(LAUNCH_ORDER, names.join("\n") + "\n");
console.log(`launch-order.txt: ${names.length} functions, ${kib(covered)} KiB of the binary's ${kib(all)} KiB of code`);
rmSync(work, { recursive: true, force: true });
