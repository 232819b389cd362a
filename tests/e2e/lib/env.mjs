// What scripts/e2e-gui.sh hands the tests: WebDriver URL, app binary, output folder; plus fresh
// temp dirs and free ports per test.
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run the tests through scripts/e2e-gui.sh)`);
  return value;
}

export const webdriverUrl = () => required("E2E_WEBDRIVER_URL");
export const appBinary = () => required("E2E_APP_BINARY");
export function outDir() {
  const dir = required("E2E_OUT_DIR");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A port nobody listens on right now: bind port 0 on loopback, read it, release it. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A fresh temp dir removed by `cleanup()`; each test gets its own data dir and workspace. */
export function tempDirs() {
  const made = [];
  return {
    make(prefix) {
      const dir = mkdtempSync(join(tmpdir(), `bridle-e2e-${prefix}-`));
      made.push(dir);
      return dir;
    },
    cleanup() {
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
    },
  };
}
