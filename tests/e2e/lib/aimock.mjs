// Runs aimock (the scriptable OpenAI/Anthropic-compatible mock model) on a free loopback port.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./env.mjs";
import { waitFor } from "./webdriver.mjs";

/**
 * Starts aimock serving the fixtures in `fixtureDir`; its output goes to `logFile`. With
 * `apiKeys`, every request must carry one of them (401 otherwise).
 */
export async function startAimock(fixtureDir, logFile, { apiKeys = [] } = {}) {
  // A root devDependency; the package exports no package.json, so find its CLI by path.
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
  const cli = join(root, "node_modules", "@copilotkit", "aimock", "dist", "cli.js");
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm install at the repository root`);
  const port = await freePort();
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [cli, "-p", String(port), "-h", "127.0.0.1", "-f", fixtureDir, "--validate-on-load"],
    {
      stdio: ["ignore", "pipe", "pipe"],
      // An empty AIMOCK_API_KEYS is an error to aimock: set it only when keys are required.
      env: apiKeys.length > 0 ? { ...process.env, AIMOCK_API_KEYS: apiKeys.join(",") } : process.env,
    },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = null;
  // If the runner exits mid-test (signal, crash), do not leave aimock behind.
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  child.once("exit", (code) => {
    exited = code;
    process.removeListener("exit", killOnExit);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((resolve) => {
      if (exited !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  try {
    await waitFor(async () => {
      if (exited !== null) throw new Error(`aimock exited with ${exited}; see ${logFile}`);
      return (await fetch(`${url}/health`)).ok;
    }, "aimock /health", 15000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    /** Every request body aimock received, for asserting on what the app sent. */
    journal: async () => (await fetch(`${url}/__aimock/journal`)).json(),
    stop,
  };
}
