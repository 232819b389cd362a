// A minimal W3C WebDriver client over fetch, for WebKitWebDriver driving the real Tauri webview.
// Only what the e2e tests need: sessions, finding elements, typing, clicking, reading, screenshots.

/** W3C element reference key in JSON responses. */
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** An error that stops `waitFor` at once instead of being retried (the awaited state cannot come). */
export function fatal(message) {
  return Object.assign(new Error(message), { fatal: true });
}

/**
 * Polls `probe` until it returns a truthy value; throws with the last failure after `timeoutMs`,
 * or at once when the probe throws a `fatal(...)` error.
 */
export async function waitFor(probe, what, timeoutMs = 20000, intervalMs = 200) {
  const start = Date.now();
  let last = "";
  while (Date.now() - start < timeoutMs) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      if (err?.fatal) throw err;
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`);
}

async function request(base, method, path, body, timeoutMs = 60000) {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    const v = json.value ?? {};
    throw new Error(`${method} ${path} -> ${res.status} ${v.error ?? ""}: ${v.message ?? JSON.stringify(json)}`);
  }
  return json.value;
}

/** Starts the app as a WebDriver session: `binary` with `args`, launched by WebKitWebDriver. */
export async function startSession(base, binary, args) {
  const value = await request(base, "POST", "/session", {
    capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary, args } } },
  });
  return new Session(base, value.sessionId);
}

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  cmd(method, path, body) {
    return request(this.base, method, `/session/${this.id}${path}`, body);
  }

  /** The first element matching `css`, or null. */
  async find(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.length > 0 ? new Element(this, found[0][ELEMENT]) : null;
  }

  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((ref) => new Element(this, ref[ELEMENT]));
  }

  /** Waits until an element matching `css` exists and returns it. */
  waitForElement(css, timeoutMs) {
    return waitFor(() => this.find(css), css, timeoutMs);
  }

  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /** The viewport as PNG bytes. */
  async screenshot() {
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }

  async close() {
    await request(this.base, "DELETE", `/session/${this.id}`);
  }
}

export class Element {
  constructor(session, ref) {
    this.session = session;
    this.ref = ref;
  }

  cmd(method, path, body) {
    return this.session.cmd(method, `/element/${this.ref}${path}`, body);
  }

  click() {
    return this.cmd("POST", "/click", {});
  }

  type(text) {
    return this.cmd("POST", "/value", { text });
  }

  /** Empties an input (WebDriver's Element Clear). */
  clear() {
    return this.cmd("POST", "/clear", {});
  }

  text() {
    return this.cmd("GET", "/text");
  }

  attribute(name) {
    return this.cmd("GET", `/attribute/${encodeURIComponent(name)}`);
  }

  property(name) {
    return this.cmd("GET", `/property/${encodeURIComponent(name)}`);
  }

  isDisplayed() {
    return this.cmd("GET", "/displayed");
  }

  isEnabled() {
    return this.cmd("GET", "/enabled");
  }
}
